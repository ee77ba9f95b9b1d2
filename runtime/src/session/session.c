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
    uint64_t tid;
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
    _Atomic uint32_t seq;                        /* next sequence number (owner writes) */
    _Atomic uint64_t attempted, written, dropped; /* owner writes, relaxed */
    buf *head, *tail;                            /* session lock */
    uint32_t nbufs;
    buf *dhead, *dtail; /* drain side */
    uint32_t doff;
    uint32_t last_seq;
    int any;
} tss;

typedef struct session {
    mantra_session_id id;
    uint32_t index;
    mantra_provider_spec *specs;
    size_t nspecs;
    mantra_session_config cfg;
    mantra_pal_mutex lock;
    mantra_pal_cond cond;
    tss *threads; /* session lock */
    uint32_t nthreads;
    uint64_t cap, allocated, buffers;
    int stopping;
    mantra_sink *sink;
    mantra_nettrace_writer *w;
    mantra_nettrace_event_key pi_key;
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

/* ---- masks --------------------------------------------------------------------------------- */

static void refresh_provider_locked(const mantra_provider_desc *p) {
    for (uint32_t e = 0; e < p->event_count; e++) {
        uint64_t bits = 0;
        for (uint32_t i = 0; i < NSLOTS; i++)
            if (g_live[i] && mantra_provider_spec_enables(g_live[i]->specs, g_live[i]->nspecs, p->name, &p->events[e]))
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

/* ---- write path ---------------------------------------------------------------------------- */

static thread_rec *get_rec(void) {
    thread_rec *r = tl_rec;
    if (MANTRA_UNLIKELY(r == NULL)) {
        r = calloc(1, sizeof *r);
        if (!r)
            return NULL;
        r->tid = mantra_pal_thread_id();
        thread_rec *head = atomic_load(&g_threads);
        do
            r->next = head;
        while (!atomic_compare_exchange_weak(&g_threads, &head, r));
        tl_rec = r;
    }
    return r;
}

/* Called with rec->writing == index + 1, so s stays alive. */
static tss *new_tss(session *s, thread_rec *r) {
    tss *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->rec = r;
    t->tid = r->tid;
    atomic_init(&t->seq, 1);
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

/* A new current buffer for t (NULL: over the cap, stopping, or out of memory). */
static buf *alloc_buffer(session *s, tss *t, uint32_t need) {
    mantra_pal_mutex_lock(&s->lock);
    buf *ok = NULL;
    if (!s->stopping) {
        uint64_t size = (uint64_t)BUF_MIN * (t->nbufs + 1);
        if (size > BUF_MAX)
            size = BUF_MAX;
        if (size < need + sizeof(buf))
            size = need + sizeof(buf);
        if (s->allocated + size > s->cap && s->cap - s->allocated >= need + sizeof(buf) && s->allocated < s->cap)
            size = s->cap - s->allocated;
        if (s->allocated + size <= s->cap) {
            buf *b = malloc((size_t)size);
            if (b) {
                b->next = NULL;
                b->size = (uint32_t)(size - sizeof(buf));
                b->used = 0;
                if (t->tail)
                    t->tail->next = b;
                else
                    t->head = b;
                t->tail = b;
                t->nbufs++;
                s->allocated += size;
                s->buffers++;
                atomic_store(&t->current, b);
                ok = b;
            }
        }
    }
    mantra_pal_cond_signal(&s->cond); /* as EventPipe: a write that needed a buffer wakes the drain */
    mantra_pal_mutex_unlock(&s->lock);
    return ok;
}

/* One session; the caller has set r->writing = index + 1 and checked the slot. */
static int write_into(session *s, thread_rec *r, const mantra_event_desc *desc, const mantra_provider_desc *prov,
                      const uint8_t *payload, uint32_t size) {
    uint32_t i = s->index;
    tss *t = r->cache[i].id == s->id ? r->cache[i].t : NULL;
    if (MANTRA_UNLIKELY(t == NULL)) {
        t = new_tss(s, r);
        if (!t)
            return MANTRA_WRITE_DROPPED; /* stopping or out of memory: no thread state to count in */
        r->cache[i].id = s->id;
        r->cache[i].t = t;
    }
    uint32_t seq = atomic_load_explicit(&t->seq, memory_order_relaxed);
    atomic_store_explicit(&t->seq, seq + 1, memory_order_relaxed);
    atomic_store_explicit(&t->attempted, atomic_load_explicit(&t->attempted, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    uint32_t need = REC_HDR + ((size + 7u) & ~7u);
    buf *b = atomic_load(&t->current);
    if (b == NULL || b->size - b->used < need) {
        /* Keep the buffer alloc_buffer() returns rather than re-reading t->current: the drain may
         * unpublish it (current = NULL) at any time, and it waits for this write (r->writing) before
         * it takes the buffer, so writing into it is safe either way. */
        b = alloc_buffer(s, t, need);
    }
    if (b != NULL) {
        rec_hdr h = {mantra_pal_now_ns(), desc, prov, seq, size};
        memcpy(b->data + b->used, &h, sizeof h);
        memcpy(b->data + b->used + REC_HDR, payload, size);
        b->used += need;
        atomic_store_explicit(&t->written, atomic_load_explicit(&t->written, memory_order_relaxed) + 1,
                              memory_order_relaxed);
        return MANTRA_WRITE_OK;
    }
    atomic_store_explicit(&t->dropped, atomic_load_explicit(&t->dropped, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    return MANTRA_WRITE_DROPPED;
}

int mantra__session_write(const mantra_event_desc *desc, const mantra_event_state *state, uint64_t sessions,
                          const uint8_t *payload, uint32_t size) {
    thread_rec *r = get_rec();
    if (!r)
        return MANTRA_WRITE_DROPPED;
    const mantra_provider_desc *prov = state->runtime;
    int rc = MANTRA_WRITE_OK;
    while (sessions) {
        uint32_t i = (uint32_t)__builtin_ctzll(sessions);
        sessions &= sessions - 1;
        atomic_store(&r->writing, i + 1);
        session *s = atomic_load(&g_slots[i]);
        if (s && write_into(s, r, desc, prov, payload, size) != MANTRA_WRITE_OK)
            rc = MANTRA_WRITE_DROPPED;
        atomic_store_explicit(&r->writing, 0, memory_order_release);
    }
    return rc;
}

/* ---- drain --------------------------------------------------------------------------------- */

static void wait_writers(uint32_t index) {
    for (thread_rec *r = atomic_load(&g_threads); r; r = r->next)
        while (atomic_load(&r->writing) == index + 1)
            mantra_pal_yield();
}

static void emit(session *s, tss *t, const rec_hdr *h, const uint8_t *payload) {
    if (s->cfg.output == MANTRA_SESSION_OUTPUT_LISTENER) {
        mantra_session_record rec = {h->provider, h->provider ? h->provider->name : PI_PROVIDER, h->desc,
                                     h->ts, t->tid, h->seq, payload, h->size};
        s->cfg.listener(s->cfg.listener_ctx, &rec);
    } else {
        mantra_nettrace_event_key key = s->pi_key;
        if (h->provider && mantra_nettrace_add_event(s->w, h->provider, h->desc, &key) != 0)
            return;
        mantra_nettrace_event ev = {.key = key, .timestamp = h->ts, .thread_id = t->tid,
                                    .processor_number = 0xFFFFFFFFu, .sequence = h->seq};
        if (mantra_nettrace_write(s->w, &ev, payload, h->size) != 0)
            return;
    }
    t->last_seq = h->seq;
    t->any = 1;
}

/* One pass: events stamped before "now" (all of them when final) go out in timestamp order. */
static void drain_pass(session *s, int final) {
    mantra_pal_mutex_lock(&s->lock);
    uint64_t stop_ts = final ? UINT64_MAX : mantra_pal_now_ns();
    for (tss *t = s->threads; t; t = t->next)
        atomic_exchange(&t->current, NULL);
    mantra_pal_mutex_unlock(&s->lock);
    /* a writer that loaded its buffer before the exchange is still inside its write */
    for (tss *t = s->threads; t; t = t->next) /* the list only grows at its head */
        while (atomic_load(&t->rec->writing) == s->index + 1)
            mantra_pal_yield();
    mantra_pal_mutex_lock(&s->lock);
    tss *first = s->threads;
    for (tss *t = first; t; t = t->next) {
        /* every buffer in the list is unpublished except a new one the writer took since */
        buf *cur = atomic_load(&t->current);
        buf *upto = t->head;
        if (!upto)
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

    uint64_t freed = 0;
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
                freed += b->size + sizeof(buf);
                free(b);
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
    if (s->w && !final)
        mantra_nettrace_flush(s->w);
    mantra_pal_mutex_lock(&s->lock);
    s->allocated -= freed;
    mantra_pal_mutex_unlock(&s->lock);
}

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

/* ---- start / stop -------------------------------------------------------------------------- */

void mantra_session_config_init(mantra_session_config *cfg) {
    memset(cfg, 0, sizeof *cfg);
    cfg->fd = -1;
    cfg->buffer_mb = 256;
    cfg->sequence_point_mb = 10;
    cfg->flush_interval_ms = 100;
}

static void free_session(session *s) {
    for (tss *t = s->threads; t;) {
        tss *n = t->next;
        for (buf *b = t->head; b;) {
            buf *nb = b->next;
            free(b);
            b = nb;
        }
        for (buf *b = t->dhead; b;) {
            buf *nb = b->next;
            free(b);
            b = nb;
        }
        free(t);
        t = n;
    }
    mantra_nettrace_writer_free(s->w);
    mantra_sink_free(s->sink);
    mantra_pal_cond_destroy(&s->cond);
    mantra_pal_mutex_destroy(&s->lock);
    free(s->specs);
    free(s);
}

static int open_output(session *s) {
    const mantra_session_config *c = &s->cfg;
    int rc;
    if (c->output == MANTRA_SESSION_OUTPUT_LISTENER)
        return c->listener ? MANTRA_OK : (mantra__session_set_error("listener output needs a listener"), MANTRA_EINVAL);
    if (c->output == MANTRA_SESSION_OUTPUT_FILE) {
        if (!c->path)
            return mantra__session_set_error("file output needs a path"), MANTRA_EINVAL;
        rc = mantra_sink_open_file(&s->sink, c->path);
    } else if (c->output == MANTRA_SESSION_OUTPUT_FD) {
        if (c->fd < 0)
            return mantra__session_set_error("fd output needs a file descriptor"), MANTRA_EINVAL;
        rc = mantra_sink_open_fd(&s->sink, c->fd, 0);
    } else {
        return mantra__session_set_error("unknown output kind"), MANTRA_EINVAL;
    }
    if (rc != 0) {
        mantra__session_set_error(s->sink ? mantra_sink_last_error(s->sink) : "cannot open the output");
        return rc;
    }
    mantra_nettrace_options o;
    mantra_nettrace_options_init(&o);
    o.ticks_per_second = MANTRA_PAL_TICKS_PER_SECOND;
    o.sync_time_ticks = mantra_pal_now_ns();
    o.sync_time_unix_ms = mantra_pal_unix_ms();
    o.process_id = mantra_pal_pid();
    o.processor_count = mantra_pal_cpu_count();
    o.sequence_point_bytes = (uint64_t)(c->sequence_point_mb ? c->sequence_point_mb : 10) << 20;
    o.order = MANTRA_NETTRACE_GLOBAL_ORDER; /* the drain merges all threads by timestamp */
    rc = mantra_nettrace_writer_new(&s->w, s->sink, &o);
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

int mantra_session_start(mantra_session_id *id, const mantra_session_config *cfg) {
    if (!id || !cfg)
        return mantra__session_set_error("NULL argument"), MANTRA_EINVAL;
    *id = 0;
    session *s = calloc(1, sizeof *s);
    if (!s)
        return MANTRA_ENOMEM;
    s->cfg = *cfg;
    if (s->cfg.flush_interval_ms == 0)
        s->cfg.flush_interval_ms = 100;
    s->cap = cfg->buffer_bytes ? cfg->buffer_bytes : (uint64_t)(cfg->buffer_mb ? cfg->buffer_mb : 256) << 20;
    s->specs = calloc(64, sizeof *s->specs);
    int rc = s->specs ? MANTRA_OK : MANTRA_ENOMEM;
    if (!rc)
        rc = mantra_provider_spec_parse(cfg->providers, s->specs, 64, &s->nspecs, NULL);
    if (!rc && mantra_pal_mutex_init(&s->lock) != 0)
        rc = MANTRA_ENOMEM;
    if (!rc && mantra_pal_cond_init(&s->cond) != 0) {
        mantra_pal_mutex_destroy(&s->lock);
        rc = MANTRA_ENOMEM;
    }
    if (rc) {
        free(s->specs);
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
    if (!rc && (rc = mantra_pal_thread_start(&s->drain, drain_main, s)) == 0)
        s->has_drain = 1;
    if (rc) {
        if (s->id) {
            ctl_lock();
            g_taken[s->index] = NULL;
            ctl_unlock();
        }
        free_session(s);
        return rc;
    }
    ctl_lock();
    g_live[s->index] = s;
    atomic_store(&g_slots[s->index], s);
    refresh_all_locked();
    ctl_unlock();
    *id = s->id;
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
        out->attempted += atomic_load_explicit(&t->attempted, memory_order_relaxed);
        out->written += atomic_load_explicit(&t->written, memory_order_relaxed);
        out->dropped += atomic_load_explicit(&t->dropped, memory_order_relaxed);
        out->threads++;
    }
    out->buffers = s->buffers;
    mantra_pal_mutex_unlock(&s->lock);
    if (s->w) {
        mantra_nettrace_stats ns;
        mantra_nettrace_get_stats(s->w, &ns);
        out->bytes = ns.bytes;
    }
}

int mantra_session_get_stats(mantra_session_id id, mantra_session_stats *out) {
    ctl_lock();
    session *s = find(id);
    if (s && g_live[s->index] == s)
        collect_stats(s, out);
    ctl_unlock();
    return s ? MANTRA_OK : (mantra__session_set_error("unknown session id"), MANTRA_EINVAL);
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

int mantra_session_stop_stats(mantra_session_id id, mantra_session_stats *out) {
    static atomic_flag stop_lock = ATOMIC_FLAG_INIT; /* one stop at a time (payload buffer) */
    ctl_lock();
    session *s = find(id);
    if (!s || g_live[s->index] != s) {
        ctl_unlock();
        return mantra__session_set_error("unknown session id"), MANTRA_EINVAL;
    }
    g_live[s->index] = NULL; /* no second stop; masks recomputed below */
    ctl_unlock();
    while (atomic_flag_test_and_set_explicit(&stop_lock, memory_order_acquire))
        mantra_pal_yield();
    /* 1. ProcessInfo, into the stopping session */
    if (s->w)
        write_process_info(s);
    /* 2. disable: masks, slot, then wait for writers inside this session */
    ctl_lock();
    refresh_all_locked();
    atomic_store(&g_slots[s->index], NULL);
    ctl_unlock();
    wait_writers(s->index);
    /* 3. stop the drain thread, flush everything */
    mantra_pal_mutex_lock(&s->lock);
    s->stopping = 1;
    mantra_pal_cond_signal(&s->cond);
    mantra_pal_mutex_unlock(&s->lock);
    if (s->has_drain)
        mantra_pal_thread_join(&s->drain);
    drain_pass(s, 1);
    int rc = MANTRA_OK;
    if (s->w) {
        /* events dropped after a thread's last written one: readers see them at the final SP */
        for (tss *t = s->threads; t; t = t->next) {
            uint32_t last = atomic_load(&t->seq) - 1u;
            uint32_t n = t->any ? last - t->last_seq : last;
            if (n)
                mantra_nettrace_thread_dropped(s->w, t->tid, n);
        }
        /* 4. (rundown: later) 5. final sequence point, end tag */
        rc = mantra_nettrace_finish(s->w);
        if (rc)
            mantra__session_set_error(mantra_nettrace_last_error(s->w));
        int crc = mantra_sink_close(s->sink);
        if (!rc && crc) {
            rc = crc;
            mantra__session_set_error(mantra_sink_last_error(s->sink));
        }
    }
    atomic_flag_clear_explicit(&stop_lock, memory_order_release);
    if (out)
        collect_stats(s, out);
    ctl_lock();
    g_taken[s->index] = NULL;
    ctl_unlock();
    free_session(s);
    return rc;
}

int mantra_session_stop(mantra_session_id id) { return mantra_session_stop_stats(id, NULL); }

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
