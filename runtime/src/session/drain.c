/* The drain of a session: a pass takes every thread's filled buffers, merges their events by
 * timestamp into the output (the session's listener event by event; the nettrace writer in
 * per-thread runs, with the sequence points that make earlier drops visible), rotates the file
 * when it is full and recycles the buffers; the drain thread that runs a pass every flush
 * interval, or in the threadless build the job that runs one per pump. As EventPipe's streaming thread and
 * ep_buffer_manager_write_all_buffers_to_file_v4 (dotnet/runtime, src/native/eventpipe/ep-session.c
 * and ep-buffer-manager.c). */
#include <stdio.h>

#include "format/nettrace-internal.h"
#include "mantra/pump.h"
#include "session-internal.h"

/* The drain runs on its own thread: the message is kept for the stop to report. */
void ss_drain_fail(session *s, const char *what) {
    if (!s->failed)
        snprintf(s->errmsg, sizeof s->errmsg, "%s", what && *what ? what : "output error");
    s->failed = 1;
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

static void emit_listener(session *s, tss *t, const rec_hdr *h) {
    const rec_ext *x = rec_ext_of(h);
    mantra_session_record rec = {h->provider, h->provider ? h->provider->name : ss_pi_provider, h->desc,
                                 h->ts, x && x->thread_id ? x->thread_id : t->tid, h->seq, rec_payload(h),
                                 rec_payload_size(h)};
    s->cfg.listener(s->cfg.listener_ctx, &rec);
    t->last_seq = h->seq;
    t->any = 1;
}

/* One event into the nettrace writer, IsSorted when not newer than sorted_upto (no later row is
 * older: drain_runs). A plain event whose definition the writer already knows goes through a cursor
 * of its own (nw_plain_one); the rest, and whatever the cursor hands back, the general path. */
static void emit_file(session *s, tss *t, const rec_hdr *h, uint64_t sorted_upto) {
    if (s->failed || !s->w)
        return;
    const uint8_t *payload = rec_payload(h);
    uint32_t size = rec_payload_size(h);
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
    if (!rc && (h->size & REC_EXT || !nw_plain_one(s->w, nw_key_metadata_id(s->w, key), t->tid, &t->nw_hint, h->seq,
                                                   h->ts, sorted_upto, payload, size))) {
        mantra_nettrace_event ev = {.key = key, .flags = h->ts <= sorted_upto ? MANTRA_NETTRACE_EVENT_SORTED : 0u,
                                    .timestamp = h->ts, .thread_id = t->tid,
                                    .processor_number = 0xFFFFFFFFu, .sequence = h->seq};
        const rec_ext *x = rec_ext_of(h);
        if (MANTRA_UNLIKELY(x != NULL)) {
            /* the writing thread stays the capture thread: the sequence numbers are its own */
            ev.capture_thread_id = t->tid;
            if (x->thread_id)
                ev.thread_id = x->thread_id;
            ev.stack = (const uint64_t *)(const void *)(x + 1);
            ev.stack_frames = x->frames;
            ev.activity_id = &x->activity;
            ev.related_activity_id = &x->related;
        }
        rc = mantra_nettrace_write(s->w, &ev, payload, size);
    }
    if (rc) {
        /* ERANGE: this event refused (the reader sees its sequence number missing); else the
         * output failed, which is sticky */
        if (rc != MANTRA_ERANGE)
            ss_drain_fail(s, mantra_nettrace_last_error(s->w));
        return;
    }
    t->last_seq = h->seq;
    t->any = 1;
}

/* The next record of t in the drained buffers, moving exhausted buffers to *drained; NULL: none. */
static const rec_hdr *head_rec(tss *t, buf **drained) {
    while (t->dhead && t->doff >= t->dhead->used) {
        buf *b = t->dhead;
        t->dhead = b->next;
        if (!t->dhead)
            t->dtail = NULL;
        t->doff = 0;
        b->next = *drained;
        *drained = b;
    }
    return t->dhead ? (const rec_hdr *)(const void *)(t->dhead->data + t->doff) : NULL;
}

/* The thread whose oldest drained event is the oldest of all, if that event is older than limit;
 * *next_ts: the oldest event of the other threads (UINT64_MAX: none). */
static tss *oldest(tss *first, uint64_t limit, buf **drained, const rec_hdr **out, uint64_t *next_ts) {
    tss *best = NULL;
    const rec_hdr *bh = NULL;
    uint64_t next = UINT64_MAX;
    for (tss *t = first; t; t = t->next) {
        const rec_hdr *h = head_rec(t, drained);
        if (!h)
            continue;
        if (h->ts < limit && (!bh || h->ts < bh->ts)) {
            if (bh && bh->ts < next)
                next = bh->ts;
            best = t;
            bh = h;
        } else if (h->ts < next) {
            next = h->ts;
        }
    }
    *out = bh;
    *next_ts = next;
    return best;
}

/* Listener output: every event on its own, merged by timestamp, as ep_get_next_event hands them. */
static void drain_merged(session *s, tss *first, uint64_t stop_ts, buf **drained) {
    const rec_hdr *h;
    tss *t;
    uint64_t next;
    while ((t = oldest(first, stop_ts, drained, &h, &next)) != NULL) {
        emit_listener(s, t, h);
        t->doff += rec_span(h);
    }
}

/* Before any event of a pass or of a new file: the threads whose first event follows drops are
 * listed at their base in a sequence point, which then precedes every event written after it. */
static void introduce_pending(session *s, tss *first, buf **drained) {
    for (tss *t = first; t && !s->failed; t = t->next) {
        const rec_hdr *h = head_rec(t, drained);
        if (h && introduce_thread(s, t, h->seq) != 0)
            ss_drain_fail(s, mantra_nettrace_last_error(s->w));
    }
}

/* A cut is due: a sequence point (every sp_bytes of output) or the next file (rotation). */
static int cut_due(const session *s) {
    if (!s->w || s->failed)
        return 0;
    return (s->sp_bytes && nw_bytes_since_sp(s->w) >= s->sp_bytes) || (s->rotate && nw_bytes(s->w) >= s->rotate);
}

/* The metadata id of h's event in the current file through the key cache; 0: the general path
 * decides (ProcessInfo, an event not in the cache yet, a definition not used yet in this file). */
static inline uint32_t cached_mid(const session *s, const rec_hdr *h) {
    if (!h->provider)
        return 0;
    uint32_t k = (uint32_t)(((uintptr_t)h->desc >> 4) % KEY_CACHE);
    return s->keys[k].desc == h->desc ? nw_key_metadata_id(s->w, s->keys[k].key) : 0;
}

/* Can the cursor take t's plain rows now? (open, t known to this file and to the writer) Its rows
 * are IsSorted up to sorted_upto. */
static int run_fast(session *s, tss *t, nw_plain *c, int open, uint64_t sorted_upto) {
    c->sorted_upto = sorted_upto;
    return open && t->known_file == s->file_no + 1 && nw_plain_thread(c, t->tid, &t->nw_hint);
}

/* The hot loop: the events of one buffer from off on through the cursor c, up to the first one that
 * is not older than limit_run or needs the general path (an extension, no cached metadata id, a row
 * the cursor hands back), or the buffer's end, each row IsSorted when sorted is 0x40 (the caller keeps
 * limit_run at the sorted rows' bound); returns its offset, *last: the last event written.
 * Out of line in two copies, one per flag (plain_rows_sorted, plain_rows_unsorted), so that the
 * loop keeps its few values in registers and the flag is a constant. */
#if defined(__GNUC__) || defined(__clang__)
#define DRAIN_NOINLINE __attribute__((noinline))
#define DRAIN_INLINE __attribute__((always_inline)) inline
/* The records 1 KB ahead, asked for while this one is encoded: they were written on the writers'
 * CPUs, and each line the drain reads comes from there (mantra emit --threads 2, MANTRA_CLOCK=tsc:
 * 40.4 -> 45.6 Mevents/s, medians of 8 alternating runs; 512 and 2048 bytes ahead did the same).
 * A prefetch never faults: past the buffer's end it fetches nothing useful. */
#define DRAIN_PREFETCH(base, at) __builtin_prefetch((const void *)((uintptr_t)(base) + (at)))
#else
#define DRAIN_NOINLINE
#define DRAIN_INLINE inline
#define DRAIN_PREFETCH(base, at) ((void)0)
#endif
static DRAIN_INLINE uint32_t plain_rows(const session *s, nw_plain *c, const uint8_t *base, uint32_t off,
                                        uint32_t used, uint64_t limit_run, uint8_t sorted, const rec_hdr **last) {
    const mantra_event_desc *last_desc = NULL;
    const rec_hdr *l = NULL;
    uint32_t mid = 0;
    while (off < used) {
        const rec_hdr *h = (const rec_hdr *)(const void *)(base + off);
        DRAIN_PREFETCH(base, off + 1024u);
        uint64_t ts = h->ts;
        if (ts >= limit_run || (h->size & REC_EXT))
            break;
        if (h->desc != last_desc) {
            uint32_t m = cached_mid(s, h);
            if (!m)
                break;
            last_desc = h->desc;
            mid = m;
        }
        uint32_t size = rec_payload_size(h);
        if (!nw_plain_row_flag(c, mid, h->seq, ts, base + off + REC_HDR, size, sorted))
            break;
        l = h;
        off += REC_HDR + ((size + 7u) & ~7u);
    }
    if (l)
        *last = l;
    return off;
}

static DRAIN_NOINLINE uint32_t plain_rows_sorted(const session *s, nw_plain *c, const uint8_t *base, uint32_t off,
                                                uint32_t used, uint64_t limit_run, const rec_hdr **last) {
    return plain_rows(s, c, base, off, used, limit_run, 0x40, last);
}

static DRAIN_NOINLINE uint32_t plain_rows_unsorted(const session *s, nw_plain *c, const uint8_t *base, uint32_t off,
                                                  uint32_t used, uint64_t limit_run, const rec_hdr **last) {
    return plain_rows(s, c, base, off, used, limit_run, 0, last);
}

/* A buffer the pass has written out: back to the spare list now (a writer waiting for a recycled
 * buffer takes it: ss_alloc_buffer), so that a long pass does not hold the whole pool until its
 * end; the final pass frees its buffers at its end (*drained). */
static void give_back(session *s, buf *b, buf **drained) {
    if (s->final_pass) {
        b->next = *drained;
        *drained = b;
        return;
    }
    b->next = NULL;
    mantra_pal_mutex_lock(&s->lock);
    ss_recycle_buffers(s, b, 0);
    mantra_pal_cond_broadcast(&s->space);
    mantra_pal_mutex_unlock(&s->lock);
}

/* A run: t's drained events older than *limit and than next + RUN_SPAN, up to the end of a buffer
 * or RUN_BYTES of records when another thread has events (so that the newest event written stays
 * near the oldest one left, and with it a cut's boundary below: a sequence point comes at most
 * about a run per thread after it is due). Rows not newer than next (the oldest event
 * of the other threads) are IsSorted, the rest not; the first row is the oldest of the pass
 * (oldest()), so always sorted. Plain events go through the writer's cursor c (open: *open), their
 * header, payload and bookkeeping only (plain_rows); the rest (stacks, activity ids, another
 * thread's id, ProcessInfo, a definition's first use, a full block) through emit_file(), with the
 * cursor closed around it. The output bytes are those of emit_file() for every event. A cut (see
 * drain_runs) can only become due when bytes reach the sink, which fast rows never do: it is
 * checked before the run and after each general event; its boundary is then past every event
 * written so far (*wmax: the newest). Exhausted buffers go back at once (give_back). */
/* The last event written through the cursor (*last, which points into a buffer of t) noted in t
 * and *wmax before anything else is written or the buffer goes back. */
static void settle_last(tss *t, const rec_hdr **last, uint64_t *wmax) {
    if (!*last)
        return;
    t->last_seq = (*last)->seq;
    t->any = 1;
    if ((*last)->ts > *wmax)
        *wmax = (*last)->ts;
    *last = NULL;
}

#define RUN_BYTES (16u * 1024u)
#define RUN_SPAN (MANTRA_PAL_TICKS_PER_SECOND / 1000u) /* 1 ms */

static void write_run(session *s, tss *t, const rec_hdr *h, uint64_t stop_ts, uint64_t *limit, uint64_t next,
                      uint64_t *wmax, buf **drained, nw_plain *c, int *open) {
    if (*limit == stop_ts && cut_due(s))
        *limit = (h->ts > *wmax ? h->ts : *wmax) + 1u;
    uint64_t span = next < UINT64_MAX - RUN_SPAN ? next + RUN_SPAN : UINT64_MAX;
    uint64_t limit_run = *limit < span ? *limit : span;
    int fast = run_fast(s, t, c, *open, next);
    const rec_hdr *last = NULL; /* the last event written through the cursor */
    buf *b;
    while ((b = t->dhead) != NULL) {
        uint32_t off = t->doff, used = b->used;
        while (off < used) {
            if (fast) {
                /* at most RUN_BYTES of records while another thread waits; the rows up to next
                 * IsSorted, the rest not: the flag is the loop's constant */
                uint32_t end = next != UINT64_MAX && used - off > RUN_BYTES ? off + RUN_BYTES : used;
                if (next >= limit_run - 1u)
                    off = plain_rows_sorted(s, c, b->data, off, end, limit_run, &last);
                else if ((off = plain_rows_sorted(s, c, b->data, off, end, next + 1u, &last)) < end)
                    off = plain_rows_unsorted(s, c, b->data, off, end, limit_run, &last);
                if (off >= used)
                    break;
                if (off >= end) {
                    t->doff = off; /* the run's share: the next run starts from the oldest event */
                    goto done;
                }
            }
            h = (const rec_hdr *)(const void *)(b->data + off);
            if (h->ts >= limit_run) {
                t->doff = off;
                goto done;
            }
            if (*open) {
                nw_plain_close(c);
                *open = 0;
            }
            settle_last(t, &last, wmax);
            emit_file(s, t, h, next);
            off += rec_span(h);
            if (h->ts > *wmax)
                *wmax = h->ts;
            if (*limit == stop_ts && cut_due(s) && (*limit = *wmax + 1u) < limit_run)
                limit_run = *limit;
            *open = !s->failed && s->w && nw_plain_open(s->w, c);
            fast = run_fast(s, t, c, *open, next);
        }
        t->dhead = b->next;
        if (!t->dhead)
            t->dtail = NULL;
        t->doff = 0;
        settle_last(t, &last, wmax); /* it points into b, which a writer may have again below */
        give_back(s, b, drained);
        if (next != UINT64_MAX)
            break;
    }
done:
    settle_last(t, &last, wmax);
}

/* File output in per-thread runs, as EventPipe writes them (ep_buffer_manager_write_all_buffers_to_file_v4,
 * dotnet/runtime, src/native/eventpipe/ep-buffer-manager.c): the thread whose oldest drained event is
 * the oldest of all writes its events (write_run), then the next such thread, so the merge costs per
 * run and the row headers stay compressed (thread, sequence and capture thread repeat within a run)
 * however finely the threads interleave. The writer is in CALLER_RUNS mode. What TraceEvent needs
 * (microsoft/perfview, src/TraceEvent/EventPipe/EventCache.cs, ProcessEventBlock): it switches the
 * current capture thread only on an IsSorted row (or a block's first row), queues unsorted rows per
 * thread, and on an IsSorted row dispatches the queued events older than it, then the row itself;
 * at a sequence point (ProcessSequencePointBlockV5OrLess: Flush) and at the end it dispatches every
 * queued event merged by timestamp. So it delivers global order when (1) a run's first row is
 * sorted, (2) a sorted row is truly not newer than any later row (here: not newer than the other
 * threads' oldest event; /work/shared/reference/nettrace-format.md 4.1, guarantee 3) and (3) no
 * event after a sequence point is older than one before it (guarantee 2). EventPipe marks only the
 * first row of a run; marking every row up to the other threads' oldest event also makes a
 * single thread's output every row IsSorted (the same bytes as global order).
 * When a sequence point or a rotation is due, the boundary becomes the newest written event's
 * timestamp + 1: every thread's events before it are written first, then the cut, so that (3)
 * holds and a new file starts with the oldest remaining event, sorted. */
static void drain_runs(session *s, tss *first, uint64_t stop_ts, buf **drained) {
    uint64_t limit = stop_ts, wmax = 0;
    nw_plain c;
    int open = 0;
    introduce_pending(s, first, drained);
    for (;;) {
        const rec_hdr *h;
        uint64_t next; /* no other thread's event in this pass is older */
        tss *t = oldest(first, limit, drained, &h, &next);
        if (!t) {
            if (limit == stop_ts)
                break;
            limit = stop_ts;
            if (open) {
                nw_plain_close(&c);
                open = 0;
            }
            if (s->failed || !s->w)
                continue;
            if (s->rotate && nw_bytes(s->w) >= s->rotate) {
                ss_rotate_file(s);
                introduce_pending(s, first, drained);
            } else if (mantra_nettrace_sequence_point(s->w) != 0) {
                ss_drain_fail(s, mantra_nettrace_last_error(s->w));
            }
            continue;
        }
        if (!open)
            open = !s->failed && s->w && nw_plain_open(s->w, &c);
        write_run(s, t, h, stop_ts, &limit, next, &wmax, drained, &c, &open);
    }
    if (open)
        nw_plain_close(&c);
}

/* After the pass unpublished t's current buffer: may t's writer still be writing into a buffer it
 * loaded before? Not when it is outside a write into this session, nor while it waits for space
 * (BLOCK, or a recycled buffer), nor once it has published a new current buffer: only the writer
 * stores a non-NULL current, in the slow path of its next write, after its write into the old
 * buffer (a sequentially consistent store and load: that write's bytes are visible here). A writer
 * that writes back to back is inside a write most of the time, so waiting for it to be outside
 * one, with a yield per look, kept the drain from its pass for up to 958 ms when two writers had
 * both CPUs (bench/session_write -o e2e2: 120 ms per pass on average). */
#define WRITER_SPINS 256u /* looks before each yield: a running writer publishes within an event */
static int writer_inside(const session *s, tss *t) {
    return atomic_load(&t->rec->writing) == s->index + 1 && !atomic_load(&t->waiting) &&
           atomic_load(&t->current) == NULL;
}

void ss_drain_pass(session *s, int final) {
    mantra_pal_mutex_lock(&s->drain_lock);
    mantra_pal_mutex_lock(&s->lock);
    uint64_t stop_ts = final ? UINT64_MAX : mantra_pal_now_ns();
    s->final_pass = final;
    s->draining = 1;
    for (tss *t = s->threads; t; t = t->next)
        atomic_exchange(&t->current, NULL);
    tss *first = s->threads;
    mantra_pal_mutex_unlock(&s->lock);
    /* the store-load fence of the rare side (writers announce themselves with a relaxed store when
     * membarrier is registered: session-internal.h, "the writers' fence"); without it a writer whose
     * announcement is still in its store buffer could be missed below while it appends */
    ss_writers_fence();
    /* a writer that loaded its buffer before the exchange is still inside its write, unless it is
     * waiting for space (BLOCK), when it touches no buffer */
    for (tss *t = first; t; t = t->next) /* the list only grows at its head */
        for (uint32_t spins = 0; writer_inside(s, t); spins++)
            if (spins >= WRITER_SPINS)
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
    if (s->cfg.output == MANTRA_SESSION_OUTPUT_LISTENER)
        drain_merged(s, first, stop_ts, &drained);
    else
        drain_runs(s, first, stop_ts, &drained);
    if (s->w && !final && !s->failed && mantra_nettrace_flush(s->w) != 0)
        ss_drain_fail(s, mantra_nettrace_last_error(s->w));
    mantra_pal_mutex_lock(&s->lock);
    ss_recycle_buffers(s, drained, final);
    s->draining = 0;
    mantra_pal_cond_broadcast(&s->space);
    mantra_pal_mutex_unlock(&s->lock);
    mantra_pal_mutex_unlock(&s->drain_lock);
}

int ss_account_trailing_drops(session *s) {
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

#ifndef MANTRA_THREADLESS
void ss_drain_main(void *arg) {
    session *s = arg;
    mantra_pal_mutex_lock(&s->lock);
    while (!s->stopping) {
        /* a writer that woke the drain during the last pass finds it passing again at once */
        if (!s->drain_wake)
            mantra_pal_cond_timedwait(&s->cond, &s->lock, s->cfg.flush_interval_ms);
        s->drain_wake = 0;
        if (s->stopping)
            break;
        mantra_pal_mutex_unlock(&s->lock);
        ss_drain_pass(s, 0);
        mantra_pal_mutex_lock(&s->lock);
    }
    mantra_pal_mutex_unlock(&s->lock);
}
#else
/* Threadless streaming, as EventPipe's streaming_loop_tick under PERFTRACING_DISABLE_THREADS
 * (dotnet/runtime, src/native/eventpipe/ep-session.c): one drain pass per pump. After an output
 * error the job stops its session and stays queued once more, so that its reference is released on
 * the next pump; after a stop it releases its reference and is done. */
int ss_stream_job(void *arg) {
    session *s = arg;
    if (atomic_load(&s->job_stop)) {
        ss_release(s);
        return MANTRA_JOB_DONE;
    }
    ss_drain_pass(s, 0);
    if (s->failed && !s->auto_stopped) {
        s->auto_stopped = 1;
        (void)mantra_session_stop(s->id);
    }
    return MANTRA_JOB_AGAIN;
}
#endif
