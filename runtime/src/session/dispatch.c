/* Event dispatch (mantra/event.h): mantra_event_write and mantra_event_write_bytes hand a written
 * event to the in-process listener (bit 63 of the enabled mask), if one is set, and to every session
 * whose bit (0..62) is set in the event's mask, down to the record in the writing thread's current
 * buffer; the listener, the process-wide write counters and the oversized-payload path. The whole
 * write path is in this file so that it inlines into one function. The payload of
 * mantra_event_write is assembled in a per-thread buffer of MANTRA_MAX_PAYLOAD bytes, so the write
 * path never allocates. */
#include <string.h>

#include "format/nettrace-internal.h"
#include "session-internal.h"

static _Atomic(mantra_listener_fn) g_listener;
static void *_Atomic g_listener_ctx;
static _Atomic uint64_t g_written, g_too_large, g_bad_string, g_dropped;
static _Thread_local thread_rec *tl_rec;
static _Thread_local session *tl_exclusive; /* while a stopping hook or rundown runs on this thread */

/* ---- thread record and (thread, session) state ------------------------------------------------ */

static inline thread_rec *current_rec(void) {
    thread_rec *r = tl_rec;
    if (MANTRA_UNLIKELY(r == NULL))
        r = tl_rec = ss_rec_attach();
    return r;
}

thread_rec *ss_current_rec(void) { return current_rec(); }

session *ss_set_exclusive(session *s) {
    session *saved = tl_exclusive;
    tl_exclusive = s;
    return saved;
}

int ss_listener_active(void) { return atomic_load_explicit(&g_listener, memory_order_acquire) != NULL; }

static void bump(_Atomic uint64_t *c) {
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1, memory_order_relaxed);
}

static tss *get_tss_slow(session *s, thread_rec *r) {
    uint32_t i = s->index;
    tss *t = ss_new_tss(s, r);
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

/* The next sequence number of t: every attempted write consumes one, stored or dropped. */
static inline uint32_t take_seq(tss *t) {
    uint64_t seq64 = atomic_load_explicit(&t->seq, memory_order_relaxed);
    atomic_store_explicit(&t->seq, seq64 + 1, memory_order_relaxed);
    return (uint32_t)seq64; /* wraps at 2^32 as nettrace's does */
}

/* ---- the write into one session ---------------------------------------------------------------- */

/* The payload into the record. Small payloads (most events: a few integers) without a call to
 * memcpy, whose size is only known at run time here: two overlapping copies of 4, 8 or 16 bytes.
 * fast_size(): the sizes copied so, which are all the common write takes (write_fast: small != 0,
 * a constant, tells the copy so, and then only sizes fast_size() takes may come: 1-3 would read
 * before src, 33 or more would be copied short). */
static inline int fast_size(uint32_t size) { return size == 0u || (size >= 4u && size <= 32u); }
#if defined(__GNUC__) || defined(__clang__)
__attribute__((always_inline))
#endif
static inline void copy_payload_as(uint8_t *dst, const uint8_t *src, uint32_t size, int small) {
    if (size >= 8u && size <= 16u) {
        uint64_t a, z;
        memcpy(&a, src, 8);
        memcpy(&z, src + size - 8u, 8);
        memcpy(dst, &a, 8);
        memcpy(dst + size - 8u, &z, 8);
    } else if (size > 16u && size <= 32u) {
        uint64_t a[2], z[2];
        memcpy(a, src, 16);
        memcpy(z, src + size - 16u, 16);
        memcpy(dst, a, 16);
        memcpy(dst + size - 16u, z, 16);
    } else if (small ? size != 0u : size >= 4u && size < 8u) {
        uint32_t a, z;
        memcpy(&a, src, 4);
        memcpy(&z, src + size - 4u, 4);
        memcpy(dst, &a, 4);
        memcpy(dst + size - 4u, &z, 4);
    } else if (!small) {
        memcpy(dst, src, size);
    }
}
static inline void copy_payload(uint8_t *dst, const uint8_t *src, uint32_t size) { copy_payload_as(dst, src, size, 0); }

/* Bytes of a record (header, extension, payload) in a buffer. */
static inline uint32_t rec_bytes(uint32_t size, const rec_ext *x) {
    return REC_HDR + (x ? (uint32_t)sizeof *x + x->frames * 8u : 0u) + ((size + 7u) & ~7u);
}

/* A record at p (8-byte aligned): the listener's buffers, and a file session's raw chunks. Field by
 * field into the buffer: a rec_hdr built on the stack and copied was stored in pieces and reloaded
 * 16 bytes at a time, two store-forwarding stalls per event (perf annotate of bench/session_write
 * -o enabled_warm). */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((always_inline))
#endif
static inline void put_record(uint8_t *p, uint64_t ts, const mantra_event_desc *desc, const mantra_provider_desc *prov,
                              uint32_t seq, const uint8_t *payload, uint32_t size, const rec_ext *x,
                              const uint64_t *ips) {
    rec_hdr *h = (rec_hdr *)(void *)p;
    h->ts = ts;
    h->desc = desc;
    h->provider = prov;
    h->seq = seq;
    h->size = size | (x ? REC_EXT : 0u);
    uint32_t xbytes = 0;
    if (MANTRA_UNLIKELY(x != NULL)) {
        xbytes = (uint32_t)sizeof *x + x->frames * 8u;
        memcpy(p + REC_HDR, x, sizeof *x);
        if (x->frames)
            memcpy(p + REC_HDR + sizeof *x, ips, x->frames * 8u);
    }
    copy_payload(p + REC_HDR + xbytes, payload, size);
}

/* ---- rows (file sessions: "row chunks" in session-internal.h) -------------------------------------- */

/* Closes b's open chunk: its length into its header; the next chunk starts 8-byte aligned. */
static void chunk_close(buf *b) {
    chunk_hdr *c = (chunk_hdr *)(void *)(b->data + b->chunk);
    c->len = b->used - b->chunk - (uint32_t)sizeof *c;
    b->used = (b->used + 7u) & ~7u;
    b->chunk = CHUNK_NONE;
    b->row_end = 0;
}

/* Bytes a new ROWS chunk with a first row of size bytes takes (b->used is 8-byte aligned then). */
static inline uint32_t chunk_need(uint32_t size) { return (uint32_t)sizeof(chunk_hdr) + ((size + 7u) & ~7u) + 8u; }
/* Can b's open chunk take a row of size bytes? One compare against b->row_end, which chunk_start
 * sets to where both the chunk (at most CHUNK_BYTES: it fits a nettrace block, nw_write_rows) and
 * the buffer end (8 bytes before it: nw_plain_copy reads the last payload in words); no open chunk:
 * 0. */
static inline int chunk_takes(const buf *b, uint32_t size) { return b->used + NW_PLAIN_HEADER_MAX + size <= b->row_end; }
static inline chunk_hdr *open_chunk(buf *b) { return (chunk_hdr *)(void *)(b->data + b->chunk); }

/* A new ROWS chunk in b whose first row is this event (its fields in the header, which is also
 * the chunk's last row until another comes). */
static void chunk_start(buf *b, const mantra_event_desc *desc, uint32_t mid, uint32_t seq, uint64_t ts,
                        const uint8_t *payload, uint32_t size) {
    if (b->chunk != CHUNK_NONE)
        chunk_close(b);
    chunk_hdr *c = (chunk_hdr *)(void *)(b->data + b->used);
    c->kind = CHUNK_ROWS;
    c->first_ts = c->last_ts = ts;
    c->first_seq = c->last_seq = seq;
    c->first_mid = c->last_mid = mid;
    c->first_size = c->last_size = size;
    c->rows = 1;
    copy_payload((uint8_t *)(c + 1), payload, size);
    b->chunk = b->used;
    b->row_end = b->size - 8u < b->chunk + CHUNK_BYTES ? b->size - 8u : b->chunk + CHUNK_BYTES;
    b->used += (uint32_t)sizeof *c + ((size + 7u) & ~7u);
    b->desc = desc;
}

/* A row of b's open chunk c (chunk_takes(b, size)), compressed against the chunk's last row, with
 * the metadata id mid (ROW_SAME_MID: the last row's, the common write's case). The caller notes a
 * new event in b->desc and c->last_mid (row_write_slow); the common write, the last row's event
 * again, has nothing to change there. small: copy_payload_as. */
#define ROW_SAME_MID 0u /* session metadata ids start at 1 (event_ids.c) */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((always_inline))
#endif
static inline void row_put(buf *b, chunk_hdr *c, uint64_t tid, uint32_t mid, uint32_t seq, uint64_t ts,
                           const uint8_t *payload, uint32_t size, int small) {
    uint32_t pmid = c->last_mid;
    if (mid == ROW_SAME_MID) /* a constant: the header's metadata-id branch folds away */
        mid = pmid;
    uint8_t *p = nw_plain_header(b->data + b->used, pmid, c->last_seq, c->last_ts, c->last_size, mid, seq, ts, size,
                                 tid, 0);
    copy_payload_as(p, payload, size, small);
    b->used = (uint32_t)(p + size - b->data);
    c->rows++;
    c->last_seq = seq;
    c->last_ts = ts;
    c->last_size = size;
}

/* The clock, never older than the thread's previous event in this session: a row's timestamp
 * delta cannot be negative, and the nettrace writer refuses a thread's event older than its
 * previous one (a clock stepping back, as a TSC can after a move to another CPU, would fail the
 * session). */
static inline uint64_t row_now(tss *t) {
    uint64_t ts = mantra_pal_now_ns_fast();
    if (ts < t->wts)
        ts = t->wts;
    t->wts = ts;
    return ts;
}

/* A file session's write beside the common one (row_write): a new chunk, a new event's id, a new
 * buffer, or a raw record. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((noinline))
#endif
static int row_write_slow(session *s, tss *t, const mantra_event_desc *desc, const mantra_provider_desc *prov,
                          const uint8_t *payload, uint32_t size, const rec_ext *x, const uint64_t *ips, uint32_t seq) {
    uint32_t mid = x == NULL && prov != NULL ? ss_id_of(s, desc, prov) : 0u;
    buf *b = atomic_load(&t->current);
    if (mid != 0) {
        if (b != NULL && chunk_takes(b, size)) {
            chunk_hdr *c = open_chunk(b);
            row_put(b, c, t->tid, mid, seq, row_now(t), payload, size, 0);
            c->last_mid = mid;
            b->desc = desc;
            return MANTRA_WRITE_OK;
        }
        if (b == NULL || b->size - b->used < chunk_need(size))
            b = ss_alloc_buffer(s, t, chunk_need(size)); /* kept: see write_into */
        if (b == NULL)
            goto dropped;
        chunk_start(b, desc, mid, seq, row_now(t), payload, size);
        return MANTRA_WRITE_OK;
    }
    /* a raw record, as the listener's buffers hold them, in a chunk of its own */
    uint32_t len = rec_bytes(size, x);
    uint32_t need = (uint32_t)sizeof(chunk_hdr) + len + 8u;
    if (b == NULL || b->size - ((b->used + 7u) & ~7u) < need)
        b = ss_alloc_buffer(s, t, need);
    if (b == NULL)
        goto dropped;
    if (b->chunk != CHUNK_NONE)
        chunk_close(b);
    uint64_t ts = row_now(t);
    chunk_hdr *c = (chunk_hdr *)(void *)(b->data + b->used);
    c->kind = CHUNK_RAW;
    c->len = len;
    c->first_ts = ts;
    c->first_seq = seq;
    put_record((uint8_t *)(c + 1), ts, desc, prov, seq, payload, size, x, ips);
    b->used += (uint32_t)sizeof *c + len;
    return MANTRA_WRITE_OK;
dropped:
    bump(&t->dropped);
    return MANTRA_WRITE_DROPPED;
}

/* The common row: the current buffer b has an open chunk that takes size bytes more, whose last
 * row is desc's. */
static inline int row_common(const buf *b, const mantra_event_desc *desc, uint32_t size) {
    return b != NULL && b->desc == desc && chunk_takes(b, size);
}

/* A file session's write: the common case (the current buffer's open chunk, the previous row's
 * event) inline, the rest in row_write_slow. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((always_inline))
#endif
static inline int row_write(session *s, tss *t, const mantra_event_desc *desc, const mantra_provider_desc *prov,
                            const uint8_t *payload, uint32_t size, const rec_ext *x, const uint64_t *ips,
                            uint32_t seq) {
    buf *b = atomic_load(&t->current);
    if (x == NULL && row_common(b, desc, size)) {
        chunk_hdr *c = open_chunk(b);
        row_put(b, c, t->tid, ROW_SAME_MID, seq, row_now(t), payload, size, 0);
        return MANTRA_WRITE_OK;
    }
    return row_write_slow(s, t, desc, prov, payload, size, x, ips, seq);
}

/* One session; the caller has set r->writing = index + 1 and checked the slot. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((always_inline))
#endif
static inline int write_into(session *s, thread_rec *r, const mantra_event_desc *desc, const mantra_provider_desc *prov,
                             const uint8_t *payload, uint32_t size, const rec_ext *x, const uint64_t *ips) {
    tss *t = get_tss(s, r);
    if (!t)
        return MANTRA_WRITE_DROPPED;
    uint32_t seq = take_seq(t);
    if (s->rows)
        return row_write(s, t, desc, prov, payload, size, x, ips, seq);
    buf *b = atomic_load(&t->current);
    uint32_t need = rec_bytes(size, x);
    if (b == NULL || b->size - b->used < need) {
        /* Keep the buffer ss_alloc_buffer() returns rather than re-reading t->current: the drain may
         * unpublish it (current = NULL) at any time, and it waits for this write (r->writing) before
         * it takes the buffer, so writing into it is safe either way. */
        b = ss_alloc_buffer(s, t, need);
    }
    if (b != NULL) {
        put_record(b->data + b->used, mantra_pal_now_ns_fast(), desc, prov, seq, payload, size, x, ips);
        b->used += need;
        return MANTRA_WRITE_OK;
    }
    bump(&t->dropped);
    return MANTRA_WRITE_DROPPED;
}

int ss_write_one(session *s, thread_rec *r, const mantra_event_desc *desc, const mantra_provider_desc *prov,
                 const uint8_t *payload, uint32_t size) {
    return write_into(s, r, desc, prov, payload, size, NULL, NULL);
}

/* During stop rundown a session takes the rundown thread's writes only. */
static inline int takes_writes_of(session *s, const thread_rec *r) {
    const thread_rec *only = atomic_load_explicit(&s->rundown_rec, memory_order_relaxed);
    return !MANTRA_UNLIKELY(only != NULL) || only == r;
}

/* The running session of bit i that takes this write, announced in r->writing (the caller ends it
 * with leave_session either way), or NULL. The caller read the mask before announcing itself: the
 * session that set bit i may have stopped since and another taken the bit over, so the bit is
 * checked again now that the slot's session cannot go away (as ep_session_write_event does: dotnet/runtime,
 * src/native/eventpipe/ep-session.c). */
static inline session *enter_session(thread_rec *r, const mantra_event_state *state, uint32_t i) {
    ss_announce_writing(r, i + 1); /* relaxed with membarrier on the other side: session-internal.h */
    session *s = atomic_load(&ss_slots[i]);
    if (s && (atomic_load_explicit(&state->enabled, memory_order_acquire) & (UINT64_C(1) << i)) &&
        takes_writes_of(s, r))
        return s;
    return NULL;
}

/* The end of what enter_session began, written into the session or not: release, so that the
 * record's bytes are visible to a drain or stop that sees the announcement gone. */
static inline void leave_session(thread_rec *r) { atomic_store_explicit(&r->writing, 0, memory_order_release); }

/* The writing thread's record, and in *sessions the sessions this thread's write goes to (a stopping
 * hook or rundown writes into its own session only). NULL, counted as an unrecorded drop, when the
 * thread has no record (out of memory). */
static inline thread_rec *writer_of(uint64_t *sessions) {
    thread_rec *r = current_rec();
    if (MANTRA_UNLIKELY(!r)) {
        atomic_fetch_add_explicit(&ss_unrecorded_drops, 1, memory_order_relaxed);
        return NULL;
    }
    session *only = tl_exclusive;
    if (MANTRA_UNLIKELY(only != NULL))
        *sessions &= UINT64_C(1) << only->index;
    return r;
}

/* Writes one serialised payload from r into every session of `sessions`, with the record extension
 * x (NULL: the plain record). Returns MANTRA_WRITE_OK, or MANTRA_WRITE_DROPPED when at least one
 * session dropped it; counts the event per thread. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((always_inline))
#endif
static inline int write_records(thread_rec *r, const mantra_event_desc *desc, const mantra_event_state *state,
                                uint64_t sessions, const uint8_t *payload, uint32_t size, const rec_ext *x,
                                const uint64_t *ips) {
    const mantra_provider_desc *prov = state->runtime;
    int rc = sessions ? MANTRA_WRITE_OK : MANTRA_WRITE_DROPPED;
    while (sessions) {
        uint32_t i = (uint32_t)__builtin_ctzll(sessions);
        sessions &= sessions - 1;
        session *s = enter_session(r, state, i);
        if (s && write_into(s, r, desc, prov, payload, size, x, ips) != MANTRA_WRITE_OK)
            rc = MANTRA_WRITE_DROPPED;
        leave_session(r);
    }
    bump(rc == MANTRA_WRITE_OK ? &r->ev_written : &r->ev_dropped);
    return rc;
}

/* The same with the options' or the thread's extras, out of line: the plain write keeps the code it
 * had before extras existed (one more test: r->has_activity). */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((noinline))
#endif
static int write_records_ext(thread_rec *r, const mantra_event_desc *desc, const mantra_event_state *state,
                             uint64_t sessions, const uint8_t *payload, uint32_t size, const mantra_event_options *o) {
    static const mantra_guid zero;
    rec_ext x;
    const uint64_t *ips = NULL;
    memset(&x, 0, sizeof x);
    if (r->has_activity) {
        x.activity = r->activity;
        x.related = r->related;
    }
    if (o != NULL) {
        if (o->flags & MANTRA_EVENT_OPT_THREAD_ID)
            x.thread_id = o->thread_id;
        if (o->flags & MANTRA_EVENT_OPT_ACTIVITY) {
            x.activity = o->activity_id ? *o->activity_id : zero;
            x.related = o->related_activity_id ? *o->related_activity_id : zero;
        }
        if (o->stack != NULL && o->stack_depth != 0) {
            x.frames = o->stack_depth < MANTRA_MAX_STACK_DEPTH ? o->stack_depth : MANTRA_MAX_STACK_DEPTH;
            ips = o->stack;
        }
    }
    return write_records(r, desc, state, sessions, payload, size, &x, ips);
}

/* Writes one serialised payload into every session of `sessions` (o: the caller's options, NULL
 * for the plain writes). */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((always_inline))
#endif
static inline int write_sessions(const mantra_event_desc *desc, const mantra_event_state *state, uint64_t sessions,
                                 const uint8_t *payload, uint32_t size, const mantra_event_options *o) {
    thread_rec *r = writer_of(&sessions);
    if (!r)
        return MANTRA_WRITE_DROPPED;
    if (MANTRA_UNLIKELY(o != NULL || r->has_activity))
        return write_records_ext(r, desc, state, sessions, payload, size, o);
    return write_records(r, desc, state, sessions, payload, size, NULL, NULL);
}

/* ---- oversized payloads ------------------------------------------------------------------------ */

/* A payload over MANTRA_MAX_PAYLOAD is refused, but every session of `sessions` counts it as dropped
 * and consumes its sequence number, so readers see the gap (as ep_buffer_manager_write_event does:
 * dotnet/runtime, src/native/eventpipe/ep-buffer-manager.c, num_oversized_events_dropped). The
 * process-wide counter is the caller's. */
static void sessions_oversized(const mantra_event_state *state, uint64_t sessions) {
    thread_rec *r = writer_of(&sessions);
    if (!r)
        return;
    while (sessions) {
        uint32_t i = (uint32_t)__builtin_ctzll(sessions);
        sessions &= sessions - 1;
        session *s = enter_session(r, state, i);
        tss *t = s ? get_tss(s, r) : NULL;
        if (t) {
            (void)take_seq(t);
            bump(&t->oversized);
            bump(&t->dropped);
        }
        leave_session(r);
    }
}

static int refuse_too_large(const mantra_event_state *state) {
    atomic_fetch_add_explicit(&g_too_large, 1, memory_order_relaxed);
    uint64_t sessions = state ? (MANTRA_ATOMIC_LOAD_RELAXED(&state->enabled) & MANTRA_SESSION_BITS) : 0;
    if (sessions != 0)
        sessions_oversized(state, sessions);
    return MANTRA_WRITE_TOO_LARGE;
}

/* ---- public write API -------------------------------------------------------------------------- */

/* The payload of mantra_event_write(_ex) serialised into the per-thread buffer; *n its size or a
 * negative status (counted). */
static const uint8_t *serialize(const mantra_event_state *state, const mantra_data *data, uint32_t count, int64_t *n) {
    static _Thread_local uint8_t payload[MANTRA_MAX_PAYLOAD];
    *n = mantra_payload_serialize(data, count, payload, sizeof payload);
    if (*n == MANTRA_WRITE_TOO_LARGE)
        *n = refuse_too_large(state);
    else if (*n < 0)
        atomic_fetch_add_explicit(&g_bad_string, 1, memory_order_relaxed);
    return payload;
}

int mantra_event_write(const mantra_event_desc *desc, mantra_event_state *state, const mantra_data *data,
                       uint32_t count) {
    int64_t n;
    const uint8_t *payload = serialize(state, data, count, &n);
    return n < 0 ? (int)n : mantra_event_write_bytes(desc, state, payload, (uint32_t)n);
}

int mantra_event_write_ex(const mantra_event_desc *desc, mantra_event_state *state, const mantra_data *data,
                          uint32_t count, const mantra_event_options *opts) {
    int64_t n;
    const uint8_t *payload = serialize(state, data, count, &n);
    return n < 0 ? (int)n : mantra_event_write_bytes_ex(desc, state, payload, (uint32_t)n, opts);
}

/* The write of a laid-out payload: the listener, then the sessions (o: options or NULL). */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((always_inline))
#endif
static inline int write_bytes(const mantra_event_desc *desc, mantra_event_state *state, const void *payload,
                              uint32_t size, const mantra_event_options *o) {
    if (MANTRA_UNLIKELY(size > MANTRA_MAX_PAYLOAD))
        return refuse_too_large(state);
    uint64_t sessions = state ? (MANTRA_ATOMIC_LOAD_RELAXED(&state->enabled) & MANTRA_SESSION_BITS) : 0;
    mantra_listener_fn fn = atomic_load_explicit(&g_listener, memory_order_acquire);
    /* a stopping hook or rundown writes into its session only, not to the listener */
    int to_listener = fn != NULL && tl_exclusive == NULL;
    if (MANTRA_UNLIKELY(to_listener))
        fn(atomic_load_explicit(&g_listener_ctx, memory_order_acquire), desc, payload, size);
    if (sessions != 0) /* counts the event itself, per thread */
        return write_sessions(desc, state, sessions, payload, size, o);
    atomic_fetch_add_explicit(to_listener ? &g_written : &g_dropped, 1, memory_order_relaxed);
    return to_listener ? MANTRA_WRITE_OK : MANTRA_WRITE_DROPPED;
}

/* ---- the common write, without a call ------------------------------------------------------------- */

/* Every write of mantra_event_write_bytes that write_fast does not begin. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((noinline))
#endif
static int write_bytes_general(const mantra_event_desc *desc, mantra_event_state *state, const void *payload,
                               uint32_t size) {
    thread_rec *r = tl_rec;
    if (r)
        r->ev_uncommon++;
    return write_bytes(desc, state, payload, size, NULL);
}

/* The rest of a write that write_fast began in session s (announced in r->writing): the general
 * path's write into that session, then what write_records does after it. Out of line and called
 * last, so that the common write needs no registers kept for it. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((noinline))
#endif
static int write_fast_rest(session *s, thread_rec *r, const mantra_event_desc *desc, const mantra_event_state *state,
                           const uint8_t *payload, uint32_t size) {
    r->ev_uncommon++;
    int rc = write_into(s, r, desc, state->runtime, payload, size, NULL, NULL);
    leave_session(r);
    bump(rc == MANTRA_WRITE_OK ? &r->ev_written : &r->ev_dropped);
    return rc;
}

/* The write most events take: one session, a file session's open chunk whose last row is this
 * event, a payload fast_size() takes, no listener, options, activity ids or rundown. The same steps
 * as the general path above (write_bytes: writer_of, enter_session, write_into, row_write), in the
 * same order, in one piece without the general path's calls (buffer allocation, the slow row,
 * memcpy) between them, which cost it spills around each call and some 40 instructions per event:
 * bench/session_write -o enabled, an outrun writer, 33.4 -> 31.4 ns per event with the ordered TSC
 * and 22.1 -> 17.6-18.2 with MANTRA_CLOCK=tsc-unordered, alternating runs on the 2-vCPU guest
 * (bench/README.md, issue 14, stop 25). Once it has entered the session, what the common write
 * does not cover (another event than the chunk's last, a full chunk, a listener-output session,
 * the thread's first write into it) goes on in write_fast_rest; before that (several sessions,
 * extras, a session that stopped meanwhile) write_bytes_general takes it, nothing changed but an
 * announcement withdrawn, and starts over. Both are called last (the compiler jumps to them). */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((always_inline))
#endif
static inline int write_fast(const mantra_event_desc *desc, mantra_event_state *state, const uint8_t *payload,
                             uint32_t size) {
    if (MANTRA_UNLIKELY(state == NULL || !fast_size(size)))
        return write_bytes_general(desc, state, payload, size);
    uint64_t sessions = MANTRA_ATOMIC_LOAD_RELAXED(&state->enabled) & MANTRA_SESSION_BITS;
    thread_rec *r = tl_rec;
    if (MANTRA_UNLIKELY(sessions == 0 || (sessions & (sessions - 1u)) != 0 || r == NULL ||
                        atomic_load_explicit(&g_listener, memory_order_acquire) != NULL || tl_exclusive != NULL ||
                        r->has_activity))
        return write_bytes_general(desc, state, payload, size);
    uint32_t i = (uint32_t)__builtin_ctzll(sessions);
    session *s = enter_session(r, state, i);
    if (MANTRA_UNLIKELY(s == NULL)) {
        leave_session(r);
        return write_bytes_general(desc, state, payload, size);
    }
    if (MANTRA_UNLIKELY(!s->rows || r->cache[i].id != s->id))
        return write_fast_rest(s, r, desc, state, payload, size);
    tss *t = r->cache[i].t;
    buf *b = atomic_load(&t->current);
    if (MANTRA_UNLIKELY(!row_common(b, desc, size)))
        return write_fast_rest(s, r, desc, state, payload, size);
    uint32_t seq = take_seq(t);
    uint64_t ts = row_now(t);
    row_put(b, open_chunk(b), t->tid, ROW_SAME_MID, seq, ts, payload, size, 1);
    leave_session(r);
    bump(&r->ev_written);
    return MANTRA_WRITE_OK;
}

int mantra_event_write_bytes(const mantra_event_desc *desc, mantra_event_state *state, const void *payload,
                             uint32_t size) {
    return write_fast(desc, state, payload, size);
}

int mantra_event_write_bytes_ex(const mantra_event_desc *desc, mantra_event_state *state, const void *payload,
                                uint32_t size, const mantra_event_options *opts) {
    return write_bytes(desc, state, payload, size, opts);
}

void mantra_set_listener(mantra_listener_fn fn, void *ctx) {
    atomic_store_explicit(&g_listener_ctx, ctx, memory_order_release);
    atomic_store_explicit(&g_listener, fn, memory_order_release);
    ss_publish_listener_bit(fn != NULL);
}

void mantra_get_write_counters(mantra_write_counters *out) {
    uint64_t sw, sd;
    ss_event_counts(&sw, &sd);
    out->written = atomic_load_explicit(&g_written, memory_order_relaxed) + sw;
    out->too_large = atomic_load_explicit(&g_too_large, memory_order_relaxed);
    out->bad_string = atomic_load_explicit(&g_bad_string, memory_order_relaxed);
    out->dropped = atomic_load_explicit(&g_dropped, memory_order_relaxed) + sd;
}
