/* The drain of a session: a pass takes every thread's filled buffers, merges their events by
 * timestamp into the output (the session's listener event by event; the nettrace writer in
 * per-thread runs, with the sequence points that make earlier drops visible), rotates the file
 * when it is full and recycles the buffers; the drain thread that runs a pass every flush
 * interval, or in the threadless build the job that runs one per pump. As EventPipe's streaming thread and
 * ep_buffer_manager_write_all_buffers_to_file_v4 (dotnet/runtime, src/native/eventpipe/ep-session.c
 * and ep-buffer-manager.c). */
#include <stdio.h>

#include "common/varint-internal.h"
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

/* A raw record into the nettrace writer, IsSorted when not newer than sorted_upto (no later row is
 * older: drain_runs), through its general path: events with a stack, activity ids or another
 * thread's id, ProcessInfo, events without a session id; rare next to the rows. */
static void emit_file(session *s, tss *t, const rec_hdr *h, uint64_t sorted_upto) {
    if (s->failed || !s->w)
        return;
    const uint8_t *payload = rec_payload(h);
    uint32_t size = rec_payload_size(h);
    mantra_nettrace_event_key key = s->pi_key;
    int rc = introduce_thread(s, t, h->seq);
    /* the session's own id (event_ids.c), also when a raw record carries the event; without one,
     * the writer's (it numbers the definition at its first use, above the session's ids) */
    uint32_t id = !rc && h->provider ? ss_id_of(s, h->desc, h->provider) : 0u;
    if (id) {
        if ((rc = ss_ids_define(s)) == 0)
            key = s->mid_keys[id];
    } else if (!rc && h->provider) {
        rc = mantra_nettrace_add_event(s->w, h->provider, h->desc, &key);
    }
    if (!rc) {
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

/* Weighs t's head (its oldest event not written yet, stamped ts) in a pass's merge: the best so far
 * when older than limit and than *best's, else the oldest of the others (*next: UINT64_MAX, none)
 * as far as it goes. The listener's records and the file's chunks (drain_runs) merge alike. */
static inline void weigh_head(tss *t, uint64_t ts, uint64_t limit, tss **best, uint64_t *best_ts, uint64_t *next) {
    if (ts < limit && (!*best || ts < *best_ts)) {
        if (*best && *best_ts < *next)
            *next = *best_ts;
        *best = t;
        *best_ts = ts;
    } else if (ts < *next) {
        *next = ts;
    }
}

/* The thread whose oldest drained event is the oldest of all, if that event is older than limit. */
static tss *oldest(tss *first, uint64_t limit, buf **drained, const rec_hdr **out) {
    tss *best = NULL;
    uint64_t best_ts = 0, next = UINT64_MAX;
    for (tss *t = first; t; t = t->next) {
        const rec_hdr *h = head_rec(t, drained);
        if (h)
            weigh_head(t, h->ts, limit, &best, &best_ts, &next);
    }
    *out = best ? head_rec(best, drained) : NULL;
    return best;
}

/* Listener output: every event on its own, merged by timestamp, as ep_get_next_event hands them. */
static void drain_merged(session *s, tss *first, uint64_t stop_ts, buf **drained) {
    const rec_hdr *h;
    tss *t;
    while ((t = oldest(first, stop_ts, drained, &h)) != NULL) {
        emit_listener(s, t, h);
        t->doff += rec_span(h);
    }
}

/* Buffers the pass has written out (a list): back to the spare list now (a writer waiting for a
 * recycled buffer takes them: ss_alloc_buffer), so that a long pass does not hold the whole pool
 * until its end; the final pass frees its buffers at its end (*drained). */
static void put_back(session *s, buf *list, buf **drained) {
    if (s->final_pass) {
        while (list) {
            buf *b = list;
            list = b->next;
            b->next = *drained;
            *drained = b;
        }
        return;
    }
    mantra_pal_mutex_lock(&s->lock);
    ss_recycle_buffers(s, list, 0);
    mantra_pal_cond_broadcast(&s->space);
    mantra_pal_mutex_unlock(&s->lock);
}

/* The file's writer borrows long runs of rows from the buffers instead of copying them (nw_write_rows)
 * and writes them from there with the staged blocks (writev): a buffer written out waits in s->held,
 * in order, until the writer has written every borrow taken before it was (b->borrowed). */
static void give_back(session *s, buf *b, buf **drained) {
    b->next = NULL;
    if (s->w && nw_borrows_done(s->w) != nw_borrows_taken(s->w)) {
        b->borrowed = nw_borrows_taken(s->w);
        if (s->held_last)
            s->held_last->next = b;
        else
            s->held = b;
        s->held_last = b;
        return;
    }
    put_back(s, b, drained);
}

/* The held buffers whose borrowed bytes the writer has written: all of them with all (the writer
 * was finished or settled, nw_borrows_settle) or without a writer. */
static void release_held(session *s, buf **drained, int all) {
    uint64_t done = s->w && !all ? nw_borrows_done(s->w) : UINT64_MAX;
    buf *list = s->held, *last = NULL;
    while (s->held && s->held->borrowed <= done) {
        last = s->held;
        s->held = s->held->next;
    }
    if (!last)
        return;
    last->next = NULL;
    if (!s->held)
        s->held_last = NULL;
    put_back(s, list, drained);
}

/* t's next chunk (in t->view, with t->has_view), or NULL: none. Exhausted buffers go back, or
 * wait in s->held while the writer borrows from them (give_back). A buffer's last chunk may be
 * open: it ends at the buffer's used bytes (dispatch.c). */
static chunk_view *head_chunk(session *s, tss *t, buf **drained) {
    if (t->has_view)
        return &t->view;
    buf *b;
    while ((b = t->dhead) != NULL && t->doff >= b->used) {
        t->dhead = b->next;
        if (!t->dhead)
            t->dtail = NULL;
        t->doff = 0;
        give_back(s, b, drained);
    }
    if (!b)
        return NULL;
    const chunk_hdr *c = (const chunk_hdr *)(const void *)(b->data + t->doff);
    uint32_t len = t->doff == b->chunk ? b->used - t->doff - (uint32_t)sizeof *c : c->len;
    chunk_view *v = &t->view;
    v->kind = c->kind;
    v->next = (t->doff + (uint32_t)sizeof *c + len + 7u) & ~7u;
    v->r.ts = c->first_ts;
    v->r.seq = c->first_seq;
    if (c->kind == CHUNK_RAW) {
        v->raw = (const rec_hdr *)(const void *)(c + 1);
    } else {
        v->first_mid = c->first_mid;
        v->r.size = c->first_size;
        v->r.payload = (const uint8_t *)(c + 1);
        v->r.rest = v->r.payload + ((c->first_size + 7u) & ~7u);
        v->r.rest_len = (size_t)((const uint8_t *)(c + 1) + len - v->r.rest);
        v->r.rest_rows = c->rows - 1u;
        v->r.last_ts = c->last_ts;
        v->r.last_seq = c->last_seq;
        v->r.last_mid = c->last_mid;
        v->r.last_size = c->last_size;
    }
    t->has_view = 1;
    return v;
}

/* Before any event of a pass or of a new file: the threads whose first event follows drops are
 * listed at their base in a sequence point, which then precedes every event written after it. */
static void introduce_pending(session *s, tss *first, buf **drained) {
    for (tss *t = first; t && !s->failed; t = t->next) {
        const chunk_view *v = head_chunk(s, t, drained);
        if (v && introduce_thread(s, t, v->r.seq) != 0)
            ss_drain_fail(s, mantra_nettrace_last_error(s->w));
    }
}

/* A cut is due: a sequence point (every sp_bytes of output) or the next file (rotation). */
static int cut_due(const session *s) {
    if (!s->w || s->failed)
        return 0;
    return (s->sp_bytes && nw_bytes_since_sp(s->w) >= s->sp_bytes) || (s->rotate && nw_bytes(s->w) >= s->rotate);
}

_Atomic uint64_t ss_chunk_splits;

/* Splits v's rows before the first one not older than limit (v->r.last_ts >= limit > v->r.ts):
 * *head gets the rows before it, v keeps the rest, which that row now begins, its fields decoded
 * from the compressed headers before it (the writer's encoding: row_put in dispatch.c). Returns 0
 * when the rows do not decode (a bug: the drain fails the session). */
static int split_rows(chunk_view *v, uint64_t limit, chunk_view *head) {
    *head = *v;
    uint32_t mid = v->first_mid, seq = v->r.seq, size = v->r.size, n = 0;
    uint64_t ts = v->r.ts, x;
    const uint8_t *p = v->r.rest, *end = v->r.rest + v->r.rest_len;
    while (p < end) {
        const uint8_t *row = p;
        uint8_t flags = *p++;
        uint32_t nmid = mid, nseq = seq + 1u, nsize = size;
        size_t k;
#define GET(dst)                                                                                                       \
    do {                                                                                                               \
        if ((k = cm_varint_get(p, (size_t)(end - p), CM_VARINT64_MAX_BYTES, &x)) == 0)                                 \
            return 0;                                                                                                  \
        p += k;                                                                                                        \
        dst;                                                                                                           \
    } while (0)
        if (flags & 0x01)
            GET(nmid = (uint32_t)x);
        if (flags & 0x02) {
            GET(nseq = seq + (uint32_t)x + 1u);
            GET((void)x); /* capture thread: this one */
            GET((void)x); /* processor */
        }
        GET((void)x);
        uint64_t nts = ts + x;
        if (flags & 0x80)
            GET(nsize = (uint32_t)x);
#undef GET
        if ((size_t)(end - p) < nsize)
            return 0;
        if (nts >= limit) {
            head->r.rest_len = (size_t)(row - head->r.rest);
            head->r.rest_rows = n;
            head->r.last_mid = mid;
            head->r.last_seq = seq;
            head->r.last_ts = ts;
            head->r.last_size = size;
            v->first_mid = nmid;
            v->r.seq = nseq;
            v->r.ts = nts;
            v->r.size = nsize;
            v->r.payload = p;
            v->r.rest = p + nsize;
            v->r.rest_len = (size_t)(end - v->r.rest);
            v->r.rest_rows -= n + 1u;
            return 1;
        }
        p += nsize;
        mid = nmid;
        seq = nseq;
        ts = nts;
        size = nsize;
        n++;
    }
    return 0;
}

/* A ROWS view into the writer in one block (nw_write_rows), its first row IsSorted when not newer
 * than sorted_upto. */
static void write_rows(session *s, tss *t, const chunk_view *v, uint64_t sorted_upto) {
    if (s->failed || !s->w)
        return;
    int rc = ss_ids_define(s);
    if (!rc)
        rc = introduce_thread(s, t, v->r.seq);
    if (!rc)
        rc = nw_write_rows(s->w, s->mid_keys[v->first_mid], t->tid, &t->nw_hint, &v->r, sorted_upto);
    if (rc) {
        ss_drain_fail(s, mantra_nettrace_last_error(s->w));
        return;
    }
    t->last_seq = v->r.last_seq;
    t->any = 1;
}

/* A run ends RUN_SPAN past the oldest event of the other threads (next): so that the newest event
 * written stays near the oldest one left, and with it a cut's boundary (drain_runs: a sequence
 * point comes at most about a run per thread after it is due). A thread that writes slowly fills
 * its chunk over a long time: without the span, one chunk of it moved the boundary that far. */
#define RUN_SPAN (MANTRA_PAL_TICKS_PER_SECOND / 1000u) /* 1 ms */

/* t's head chunk (the oldest of all: its first row is, so it is IsSorted) up to limit and to
 * next + RUN_SPAN: whole, or split (split_rows) when rows of it are newer, the rest staying t's
 * head. *wmax: the newest event written. */
static void write_chunk(session *s, tss *t, uint64_t limit, uint64_t next, uint64_t *wmax) {
    chunk_view *v = &t->view;
    if (next < UINT64_MAX - RUN_SPAN && next + RUN_SPAN < limit) /* v's first event is not newer than next */
        limit = next + RUN_SPAN;
    if (v->kind == CHUNK_RAW) {
        emit_file(s, t, v->raw, next);
        if (v->r.ts > *wmax)
            *wmax = v->r.ts;
    } else if (v->r.last_ts >= limit) {
        chunk_view head;
        atomic_fetch_add_explicit(&ss_chunk_splits, 1, memory_order_relaxed);
        if (!split_rows(v, limit, &head)) {
            ss_drain_fail(s, "a thread's buffer does not decode");
        } else {
            write_rows(s, t, &head, next);
            if (head.r.last_ts > *wmax)
                *wmax = head.r.last_ts;
            return; /* v is the rest */
        }
    } else {
        write_rows(s, t, v, next);
        if (v->r.last_ts > *wmax)
            *wmax = v->r.last_ts;
    }
    t->doff = v->next;
    t->has_view = 0;
}

/* File output in per-thread runs, as EventPipe writes them (ep_buffer_manager_write_all_buffers_to_file_v4,
 * dotnet/runtime, src/native/eventpipe/ep-buffer-manager.c). The writers encoded their rows already,
 * in chunks (session-internal.h, "row chunks"): the chunk whose first event is the oldest of all
 * threads' goes into the writer (write_chunk, nw_write_rows: one row re-encoded, the rest copied
 * or borrowed), then the next such chunk. The writer is in CALLER_RUNS mode. What TraceEvent needs
 * (microsoft/perfview, src/TraceEvent/EventPipe/EventCache.cs, ProcessEventBlock): it switches the
 * current capture thread only on an IsSorted row (or a block's first row), queues unsorted rows per
 * thread, and on an IsSorted row dispatches the queued events older than it, then the row itself;
 * at a sequence point (ProcessSequencePointBlockV5OrLess: Flush) and at the end it dispatches every
 * queued event merged by timestamp. So it delivers global order when (1) a run's first row is
 * sorted, (2) a sorted row is truly not newer than any later row and (3) no event after a sequence
 * point is older than one before it (/work/shared/reference/nettrace-format.md 4.1). Here (1) and
 * (2): a chunk's first row is sorted, the other rows not (as EventPipe marks a run's first row);
 * it is the oldest head, each thread's events are in time order, and later passes only have
 * events stamped after this pass's stop_ts. (3): a pass writes events older than stop_ts only
 * (a chunk with newer rows is split, the rest waits); when a sequence point or a rotation is due,
 * the boundary becomes the newest written event's timestamp + 1: every thread's events before it
 * are written first, then the cut, and a new file starts with the oldest remaining event. */
static void drain_runs(session *s, tss *first, uint64_t stop_ts, buf **drained) {
    uint64_t limit = stop_ts, wmax = 0;
    introduce_pending(s, first, drained);
    for (;;) {
        tss *best = NULL;
        uint64_t best_ts = 0, next = UINT64_MAX; /* next: no other thread's event in this pass is older */
        for (tss *t = first; t; t = t->next) {
            const chunk_view *v = head_chunk(s, t, drained);
            if (v)
                weigh_head(t, v->r.ts, limit, &best, &best_ts, &next);
        }
        if (!best) {
            if (limit == stop_ts)
                break;
            limit = stop_ts;
            if (s->failed || !s->w)
                continue;
            if (s->rotate && nw_bytes(s->w) >= s->rotate) {
                if (ss_rotate_file(s) == 0) /* the old writer wrote everything it borrowed */
                    release_held(s, drained, 1);
                introduce_pending(s, first, drained);
            } else if (mantra_nettrace_sequence_point(s->w) != 0) {
                ss_drain_fail(s, mantra_nettrace_last_error(s->w));
            }
            continue;
        }
        if (limit == stop_ts && cut_due(s))
            limit = (best_ts > wmax ? best_ts : wmax) + 1u;
        write_chunk(s, best, limit, next, &wmax);
        if (s->held)
            release_held(s, drained, 0);
        if (limit == stop_ts && cut_due(s))
            limit = wmax + 1u;
    }
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

/* A thread the pass took this many bytes of events from counts as busy (spread_drain): a writer
 * that keeps a CPU busy writes megabytes between passes, a timer's or a sampler's few events do
 * not make it one. */
#define BUSY_BYTES (64u * 1024u)

uint32_t ss_drain_pass(session *s, int final) {
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
    uint32_t busy = 0;
    for (tss *t = first; t; t = t->next) {
        /* every buffer in the list is unpublished except a new one the writer took since */
        buf *cur = atomic_load(&t->current);
        if (!t->head)
            continue;
        buf *last = NULL;
        uint64_t bytes = 0;
        for (buf *b = t->head; b && b != cur; b = b->next) {
            last = b;
            bytes += b->used;
        }
        if (!last)
            continue;
        busy += bytes >= BUSY_BYTES;
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
    if (s->w)
        nw_borrows_settle(s->w); /* the final pass's or a failed session's: before the buffers go */
    release_held(s, &drained, 1);
    mantra_pal_mutex_lock(&s->lock);
    ss_recycle_buffers(s, drained, final);
    s->draining = 0;
    mantra_pal_cond_broadcast(&s->space);
    mantra_pal_mutex_unlock(&s->lock);
    mantra_pal_mutex_unlock(&s->drain_lock);
    return busy;
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
/* Where the drain thread runs. When as many threads keep writing as the drain has CPUs, it shares
 * a CPU with one of them, and the kernel leaves it there: that writer gets a quarter less CPU than
 * the others and ends last, while the CPUs of those that ended idle (bench/session_write -o e2e2,
 * 2 writers on 2 CPUs: the writers ended 19-30% of the wall time apart). Then each pass runs on
 * the next of the drain's CPUs in turn, so that every writer gives the drain the same share. A
 * writer counts when the last pass took at least BUSY_BYTES from it; with fewer such writers than
 * CPUs the drain gets its whole mask back (a free CPU is the kernel's to find), and so it does
 * before it ends, and when the host refuses a pin. The mask is the one the drain started with.
 * MANTRA_DRAIN_SPREAD=0 turns it off (session.spread). */
#define DRAIN_CPUS_MAX 1024u
typedef struct drain_cpus {
    uint32_t cpu[DRAIN_CPUS_MAX];
    uint32_t n, next;
    int on, pinned;
} drain_cpus;

static void spread_init(drain_cpus *d, const session *s) {
    d->n = mantra_pal_thread_cpus(d->cpu, DRAIN_CPUS_MAX);
    d->next = 0;
    d->pinned = 0;
    d->on = s->spread && d->n > 1;
}

static void spread_release(drain_cpus *d) {
    if (d->pinned)
        d->pinned = mantra_pal_thread_pin(d->cpu, d->n) != 0;
}

static void spread_drain(drain_cpus *d, uint32_t busy) {
    if (!d->on)
        return;
    if (busy < d->n) {
        spread_release(d);
        return;
    }
    if (mantra_pal_thread_pin(&d->cpu[d->next], 1) == 0) {
        d->pinned = 1;
        d->next = (d->next + 1u) % d->n;
    } else { /* the host will not (its CPUs changed, say): leave it to the kernel */
        spread_release(d);
        d->on = 0;
    }
}

void ss_drain_main(void *arg) {
    session *s = arg;
    drain_cpus cpus;
    uint32_t busy = 0; /* threads the last pass took BUSY_BYTES from */
    spread_init(&cpus, s);
    ss_pool_fill(s);
    mantra_pal_mutex_lock(&s->lock);
    while (!s->stopping) {
        /* a writer that woke the drain during the last pass finds it passing again at once */
        if (!s->drain_wake)
            mantra_pal_cond_timedwait(&s->cond, &s->lock, s->cfg.flush_interval_ms);
        s->drain_wake = 0;
        if (s->stopping)
            break;
        mantra_pal_mutex_unlock(&s->lock);
        spread_drain(&cpus, busy);
        busy = ss_drain_pass(s, 0);
        mantra_pal_mutex_lock(&s->lock);
    }
    mantra_pal_mutex_unlock(&s->lock);
    spread_release(&cpus);
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
