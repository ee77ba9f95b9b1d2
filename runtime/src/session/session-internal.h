/* session-internal.h - what the files of runtime/src/session/ share: the session object, the
 * per-thread records and buffers, the session table and its lock, and the functions one file of the
 * folder calls in another (prefix ss_). Private.
 *
 * Files: session.c (session table, enable masks, start, stop, stats), dispatch.c (listener,
 * counters and the write path down to the per-thread buffer), registry.c (registered providers),
 * thread_buffers.c (thread records, buffer allocation and reuse), drain.c (the drain pass, the
 * drain thread or threadless job), output.c (sink and nettrace writer, ProcessInfo, rotation),
 * hooks.c (stopping hooks and rundown callbacks), spec.c (provider configuration), startup.c
 * (startup tracing from the environment).
 *
 * Concurrency. The table lock (ss_ctl_lock, a spin lock: start, stop and registration are rare)
 * guards the session table, the mask recomputation and the callback tables. ss_slots[i] is what writers see. A writer announces "writing
 * into session i" in its thread record (rec->writing = i + 1, sequentially consistent) before it
 * reads ss_slots[i], as EventPipe's session_write_in_progress does (dotnet/runtime,
 * src/native/eventpipe/ep.c, write_event_2); stop clears the slot and then waits until no thread
 * record says i + 1, so nothing of the session is freed under a writer. Each (thread, session) pair
 * has a tss: its buffers, current buffer and sequence number; the writer appends to its current
 * buffer without a lock. The session lock is taken only to allocate a buffer and by the drain,
 * which unpublishes every current buffer (exchange with NULL), waits for the writers outside the
 * lock, then takes the buffers and merges them by timestamp. */
#ifndef MANTRA_SESSION_INTERNAL_H
#define MANTRA_SESSION_INTERNAL_H

#include <stdatomic.h>
#include <stdint.h>

#include "mantra/event.h"
#include "mantra/nettrace_writer.h"
#include "mantra/session.h"
#include "format/nettrace-internal.h"
#include "platform/platform-internal.h"

/* Bit 63 of mantra_event_state.enabled is the process-wide listener's; sessions use 0..62. */
#define MANTRA_LISTENER_BIT (UINT64_C(1) << 63)
#define MANTRA_SESSION_BITS (~MANTRA_LISTENER_BIT)

#define MAX_HOOKS 16u
/* Sequence numbers of a (thread, session) start at 2, so that "1" can stand for "before the first
 * event" in a sequence point: TraceEvent skips the drop check when the last known number is 0 in
 * V4/V5 (microsoft/perfview, src/TraceEvent/EventPipe/EventCache.cs, dropped-event accounting in
 * NotifyDroppedEventsIfNeeded), so drops before a thread's first written event are only visible
 * against a non-zero base. */
#define SEQ_FIRST 2u

typedef struct buf {
    struct buf *next;
    uint32_t size, used;
    /* Row buffers (file output, session.rows), written by the buffer's writer only while the
     * buffer is its current one: the open chunk (its chunk_hdr's offset, CHUNK_NONE: none), where
     * rows may go up to (0: no open chunk), and the event of its last row (whose metadata id
     * needs no lookup then) */
    uint32_t chunk, row_end;
    const mantra_event_desc *desc;
    uint64_t borrowed; /* drain, in s->held: the writer's borrows until its bytes are written */
    _Alignas(8) uint8_t data[];
} buf;
#define CHUNK_NONE UINT32_MAX

typedef struct rec_hdr {
    uint64_t ts;
    const mantra_event_desc *desc;
    const mantra_provider_desc *provider;
    uint32_t seq, size;
} rec_hdr;
/* A record in a buffer: the header, then the payload, each 8-byte aligned (32 bytes with 64-bit
 * pointers, 24 with 32-bit ones). */
#define REC_HDR ((uint32_t)((sizeof(rec_hdr) + 7u) & ~(size_t)7u))
_Static_assert(sizeof(rec_hdr) % 8u == 0, "record header keeps payloads 8-byte aligned");

/* An event with a stack, another thread's id or activity ids (mantra_event_write_ex, or a thread
 * with activity ids) has REC_EXT set in rec_hdr.size, whose low bits stay the payload size, and a
 * rec_ext with its stack's IPs between the header and the payload. Events without them keep the
 * plain record: the common write costs what it did. */
#define REC_EXT 0x80000000u
#define REC_SIZE_MASK 0x00FFFFFFu
typedef struct rec_ext {
    uint64_t thread_id; /* 0: the capture thread's */
    mantra_guid activity, related;
    uint32_t frames, pad; /* frames uint64_t IPs follow, leaf first */
} rec_ext;
_Static_assert(sizeof(rec_ext) % 8u == 0, "record extension keeps payloads 8-byte aligned");

static inline uint32_t rec_payload_size(const rec_hdr *h) { return h->size & REC_SIZE_MASK; }
static inline const rec_ext *rec_ext_of(const rec_hdr *h) {
    return (h->size & REC_EXT) ? (const rec_ext *)(const void *)((const uint8_t *)h + REC_HDR) : NULL;
}
static inline uint32_t rec_ext_bytes(const rec_hdr *h) {
    const rec_ext *x = rec_ext_of(h);
    return x ? (uint32_t)sizeof(rec_ext) + x->frames * 8u : 0u;
}
static inline const uint8_t *rec_payload(const rec_hdr *h) {
    return (const uint8_t *)h + REC_HDR + rec_ext_bytes(h);
}
/* Bytes of the whole record in its buffer. */
static inline uint32_t rec_span(const rec_hdr *h) {
    return REC_HDR + rec_ext_bytes(h) + ((rec_payload_size(h) + 7u) & ~7u);
}

/* ---- row chunks (file output) ----
 * A file session's writers encode nettrace V5 event rows themselves, so that the drain only moves
 * them (drain.c, write_chunk): a buffer holds chunks, each a chunk_hdr and then
 *   CHUNK_ROWS: the first row's payload (its header fields are in the chunk_hdr: the drain writes
 *     that row against the block's state), then the chunk's other rows, compressed against the row
 *     before them as in an EventBlock with compressed headers (microsoft/perfview,
 *     src/TraceEvent/EventPipe/NetTraceFormat_v5.md; dotnet/runtime, src/native/eventpipe/ep-block.c):
 *     flags 0x01 MetadataId, 0x02 SequenceNumber delta - 1 with CaptureThreadId and ProcessorNumber,
 *     the TimeStampDelta always, 0x80 PayloadSize; never IsSorted, thread or stack (the first row's);
 *   CHUNK_RAW: one record (rec_hdr, as the listener's buffers hold them) for what the drain writes
 *     through the writer's general path: stacks, activity ids, another thread's id, ProcessInfo, an
 *     event without a session metadata id.
 * A chunk ends at CHUNK_BYTES of rows or at a raw record; chunks start 8-byte aligned. The last
 * chunk of a buffer may be open (buf.chunk): it ends at the buffer's used bytes. */
#define CHUNK_ROWS 1u
#define CHUNK_RAW 2u
#define CHUNK_BYTES (16u * 1024u)
typedef struct chunk_hdr {
    uint32_t kind, len; /* len: bytes after the header (ROWS: set when the chunk closes) */
    uint64_t first_ts;
    uint32_t first_seq, first_mid, first_size, rows;
    uint64_t last_ts; /* rows and last_*: kept by the writer as it appends (ROWS) */
    uint32_t last_seq, last_mid, last_size, pad;
} chunk_hdr;
_Static_assert(sizeof(chunk_hdr) % 8u == 0, "chunks stay 8-byte aligned");

/* The drain's view of a thread's next chunk, or of a ROWS chunk's rest after a split (drain.c): the
 * rows as the nettrace writer takes them (nw_write_rows), whose first row's metadata id is
 * first_mid; r.ts and r.seq are the first event's for both kinds. */
typedef struct chunk_view {
    uint32_t kind;
    uint32_t next;     /* offset in the buffer of the chunk after this one */
    uint32_t first_mid; /* ROWS */
    const rec_hdr *raw; /* RAW */
    nw_rows r;
} chunk_view;

/* Session metadata ids (event_ids.c): a file session numbers its events itself, 1..MID_MAX, so that
 * writers can put the id into their rows; the drain defines them in each file before the rows that
 * use them. Beyond MID_MAX an event goes through raw records (the writer then numbers it). */
#define MID_MAX 4096u
#define MID_SLOTS (2u * MID_MAX)
#define MID_NONE UINT32_MAX /* a slot's event has no id: raw records (the table was full, or the
                             * nettrace writer would refuse its definition) */
#define MID_ENTRIES_MAX (MID_SLOTS / 4u * 3u) /* events the table holds, with or without an id */
typedef struct mid_slot {
    const mantra_event_desc *_Atomic desc; /* NULL: empty; set (release) after mid */
    uint32_t mid;
} mid_slot;
typedef struct mid_def {
    const mantra_event_desc *desc;
    const mantra_provider_desc *provider;
} mid_def;

typedef struct thread_rec {
    struct thread_rec *next;
    _Atomic uint32_t writing; /* session index + 1 while inside a write, else 0 */
    _Atomic int free;         /* 1: its thread exited; a new thread may take it over */
    uint64_t tid;
    _Atomic uint64_t ev_written, ev_dropped; /* events through sessions (owner writes, relaxed) */
    uint64_t ev_uncommon; /* owner only: writes of mantra_event_write_bytes the common write did not
                           * finish (dispatch.c, write_fast; read by tests) */
    int has_activity;            /* owner only: activity or related id non-zero (activity.c) */
    mantra_guid activity, related; /* owner only */
    struct {
        uint64_t id;
        struct tss *t;
    } cache[MANTRA_MAX_SESSIONS];
} thread_rec;

typedef struct tss {
    struct tss *next;
    thread_rec *rec;
    uint64_t tid;
    _Atomic(buf *) current;
    /* next sequence number, 64 bits wide: the trace carries its low 32 bits, and attempts made =
     * seq - SEQ_FIRST, written = attempts - dropped (owner writes, relaxed) */
    _Atomic uint64_t seq;
    uint64_t wts; /* owner: its last event's timestamp in a file session (dispatch.c, row_now) */
    _Atomic uint64_t dropped, oversized, blocked; /* owner writes, relaxed */
    _Atomic int waiting;                         /* BLOCK: waiting for space, touching no buffer */
    buf *head, *tail;                            /* session lock */
    uint32_t nbufs;
    buf *dhead, *dtail; /* drain side */
    uint32_t doff;
    uint32_t last_seq;   /* drain: sequence number of the last event handed to the output */
    int any;             /* drain: an event of this thread reached the output */
    uint32_t known_file; /* drain: file number + 1 whose writer knows this thread's base */
    uint32_t nw_hint;    /* drain: index + 1 of the thread in the writer's table (checked hint) */
    int has_view;        /* drain (file output): view is the head chunk (at doff, or what a split left of it) */
    chunk_view view;
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
    uint64_t sp_bytes;     /* a sequence point every this many bytes of a file (drain) */
    int mode;              /* table lock: MODE_* (which entries enable events) */
    _Atomic(thread_rec *) rundown_rec; /* MODE_STOP_RUNDOWN: the only thread whose writes are taken */
    _Atomic uint32_t refs; /* owner + streaming job (threadless) */
    int claimed;           /* table lock: a stop has begun */
    mantra_pal_mutex lock;
    mantra_pal_cond cond;  /* wakes the drain thread */
    mantra_pal_cond space; /* BLOCK: wakes writers waiting for space */
    mantra_pal_mutex drain_lock; /* one drain pass at a time */
    tss *threads; /* session lock */
    /* session lock: drained buffers kept for reuse (no page faults on reuse), taken from the front
     * and given back at the end (spare_last), so that a writer reuses the buffer drained longest
     * ago (thread_buffers.c, ss_recycle_buffers) */
    buf *spare;
    buf *spare_last;
    uint64_t spare_bytes;
    uint64_t pool; /* bytes of the pool mapped at start (thread_buffers.c) */
    uint8_t *pool_base;    /* the pool's mapping: pool_size bytes in pieces of BUF_MAX (thread_buffers.c) */
    uint64_t pool_size;
    uint8_t *pool_next;    /* session lock: where the pool's part not handed out for populating begins */
    uint64_t pool_pending; /* session lock: bytes of the pool not in the spare list yet (being populated) */
    uint8_t *pool_done;    /* at the end: [piece] 1 once given back, freed in runs (ss_free_buffers) */
    int draining;       /* session lock: a drain pass holds buffers it will give back */
    int drain_wake;     /* session lock: a writer short of a buffer woke the drain (not lost during a pass) */
    int recycle_missed; /* session lock: a writer's wait for a recycled buffer timed out since the
                         * drain last gave one back (ss_alloc_buffer) */
    int final_pass;     /* drain: the pass frees its buffers instead of giving them back */
    buf *held, *held_last; /* drain: written out, but the file's writer still borrows their bytes
                            * (nw_write_rows): given back once it has written them (drain.c) */
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
    uint64_t bytes_done;   /* bytes of finished files */
    /* file output: writers encode rows into chunks (see "row chunks") with the session's ids */
    int rows;
    mid_slot *mid_slots;   /* MID_SLOTS, open addressing by the desc's address */
    mid_def *mid_defs;     /* [id]: ids 1..nmids */
    _Atomic uint32_t nmids; /* set (release) after mid_defs[id], before the id's slot */
    uint32_t mid_entries;   /* session lock: slots taken */
    uint32_t file_mids;    /* drain: ids defined in the current file */
    mantra_nettrace_event_key *mid_keys; /* drain: [id] -> the current file's key */
    mantra_pal_thread drain;
    int has_drain;
    int spread; /* the drain runs its passes on each of its CPUs in turn when writers fill them
                 * (drain.c, spread_drain); MANTRA_DRAIN_SPREAD=0: never */
} session;

/* ---- the writers' fence (session.c) ----
 * A writer announces itself (r->writing = index + 1) and then reads what a stop or the drain
 * changes (ss_slots[i], t->current); the stop and the drain change those and then read r->writing.
 * Each side needs a store-load fence between its store and its load (Dekker), or one of them could
 * miss the other. EventPipe has the same handshake (dotnet/runtime, src/native/eventpipe/ep.c,
 * write_event_2: ep_thread_set_session_write_in_progress, then ep_volatile_load_session; the
 * disable side, disable_holding_lock, stores NULL into the slot and then waits in
 * ep_session_suspend_write_event). libmantra paid a sequentially consistent store per event for
 * it: on x86-64 an xchg, which waits for every store before it (the previous record's lines) to
 * reach the cache (5.7 ns alone on this guest, 22 ns under load: bench/session_write -o parts,
 * p_xchg; 2-3 ns of writer CPU per event against the relaxed store in enabled_warm).
 *
 * Here, once the process is registered for membarrier(2) (ss_asym_fence = 1, set by mantra_init()
 * or else at the first session start, and never cleared), the writer stores r->writing relaxed and only keeps the
 * compiler from moving its loads above the store (atomic_signal_fence); the rare side calls
 * ss_writers_fence() between its store and its load, which runs a full barrier on every running
 * thread of the process (mantra_pal_heavy_fence). Why that suffices: the barrier lands on the
 * writer's CPU at some point of its program. Before the writer's store: the writer's later loads
 * come after the barrier, hence after the rare side's store (which precedes the membarrier call in
 * the rare side's program order, and the call is a full barrier on the caller too): the writer
 * sees the slot NULL or current NULL. After the store: the store is globally visible when the call
 * returns, so the rare side's load sees index + 1 and waits. A thread not running at the call
 * passed a full barrier at its context switch. Leaving stays a release store, read with acquire
 * by the waiting side: the record's bytes are visible before writing = 0 is. The same pattern as
 * liburcu's urcu-memb flavour and folly's asymmetricHeavyBarrier.
 *
 * Without membarrier (older kernels, seccomp, non-Linux), under MANTRA_SESSION_FENCE=seqcst, and
 * in ThreadSanitizer builds (TSan cannot see membarrier's barrier and would report the relaxed
 * store as a race) writers keep the sequentially consistent store and ss_writers_fence() is a
 * plain seq_cst fence. The threadless build has one thread: either way is correct there. */
#if defined(__SANITIZE_THREAD__)
#define SS_ASYM_FENCE 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SS_ASYM_FENCE 0
#endif
#endif
#ifndef SS_ASYM_FENCE
#define SS_ASYM_FENCE 1
#endif
/* 1: writers announce themselves with a relaxed store (membarrier registered). */
extern _Atomic int ss_asym_fence;
/* ss_init_writers_fence() decides ss_asym_fence once per process (startup-internal.h): mantra_init()
 * calls it, and each session start before the session is published. */
/* The rare side's fence: between the store (slot or current cleared) and the load of r->writing. */
void ss_writers_fence(void);
/* The writer's side: r->writing = v before it reads the slot and its current buffer. */
static inline void ss_announce_writing(thread_rec *r, uint32_t v) {
#if SS_ASYM_FENCE
    if (atomic_load_explicit(&ss_asym_fence, memory_order_relaxed)) {
        atomic_store_explicit(&r->writing, v, memory_order_relaxed);
        atomic_signal_fence(memory_order_seq_cst);
        return;
    }
#endif
    atomic_store(&r->writing, v);
}

/* ---- session table (session.c) ---- */

/* The session lock of the table, the masks and the callback tables. */
void ss_ctl_lock(void);
/* timer.c: cancels every mantra_session_stop_after timer (joins their threads). */
void ss_timers_shutdown(void);
void ss_ctl_unlock(void);
/* What writers see: the running session of each bit (NULL once its stop has begun to wait). */
extern _Atomic(session *) ss_slots[MANTRA_MAX_SESSIONS];
/* Recomputes the session bits of one provider's events (called by registration). */
void ss_refresh_provider(const mantra_provider_desc *provider);
/* Drops a reference; the last one frees the session. */
void ss_release(session *s);

/* ---- error text (spec.c) ---- */

void ss_set_error(const char *msg);

/* ---- registry (registry.c) ---- */

/* The number of registered providers and provider i. Entries never change once published. */
uint32_t ss_provider_count(void);
const mantra_provider_desc *ss_provider_at(uint32_t i);
/* Sets or clears the listener bit of every registered event's enabled mask. */
void ss_publish_listener_bit(int on);

/* ---- write path (dispatch.c) ---- */

/* Is a process listener set? */
int ss_listener_active(void);
/* The calling thread's record (NULL: out of memory). */
thread_rec *ss_current_rec(void);
/* Writes one event into session s from thread record r; the caller has set r->writing = index + 1.
 * prov NULL: libmantra's own ProcessInfo event. Returns MANTRA_WRITE_OK or MANTRA_WRITE_DROPPED. */
int ss_write_one(session *s, thread_rec *r, const mantra_event_desc *desc, const mantra_provider_desc *prov,
                 const uint8_t *payload, uint32_t size);
/* A thread record taken over or new: no activity ids (activity.c). */
void ss_activity_reset(thread_rec *r);
/* Makes s the only session the calling thread's events go to (a stopping hook or rundown runs;
 * NULL: back to normal); returns the previous one. */
session *ss_set_exclusive(session *s);

/* ---- thread records and buffers (thread_buffers.c) ---- */

/* Push-only list of every thread record. */
extern _Atomic(thread_rec *) ss_threads;
/* A record for a thread that has none yet: a free one taken over, or a new one. NULL: out of
 * memory. Registers the thread-exit callback that frees it for reuse. */
thread_rec *ss_rec_attach(void);
/* The (thread, session) state of r in s, created on r's first write into s (NULL: s is stopping or
 * out of memory). Called with r->writing == index + 1, so s stays alive. */
tss *ss_new_tss(session *s, thread_rec *r);
/* A new current buffer for t with room for need bytes (NULL: over the cap, stopping, or out of
 * memory; BLOCK mode waits for space first). */
buf *ss_alloc_buffer(session *s, tss *t, uint32_t need);
/* Drained buffers: kept for reuse up to the spare budget (never when final), the rest freed.
 * Session lock held. */
void ss_recycle_buffers(session *s, buf *drained, int final);
/* The session's pool at start: spare buffers, mapped now (thread_buffers.c). */
void ss_fill_pool(session *s);
/* Populates the rest of the pool (the drain thread, when it starts). */
void ss_pool_fill(session *s);
/* Tests only: microseconds the drain thread waits before each piece of the pool it populates, so
 * that a test's writer outruns the fill (0: none). */
extern _Atomic uint32_t ss_pool_fill_pause_us;
/* Frees every buffer and thread state of s. */
void ss_free_buffers(session *s);
/* Waits until no thread is inside a write into session index. */
void ss_wait_writers(uint32_t index);
/* Events written to / dropped by sessions, summed over thread records. */
void ss_event_counts(uint64_t *written, uint64_t *dropped);
/* Records of threads that could not get one and dropped their event. */
extern _Atomic uint64_t ss_unrecorded_drops;

/* ---- drain (drain.c) ---- */

/* One pass: events stamped before "now" (all of them when final) go out in timestamp order. Returns
 * how many threads it took at least BUSY_BYTES of events from (the drain thread decides where it
 * runs from it: drain.c, spread_drain). */
uint32_t ss_drain_pass(session *s, int final);
/* Chunks split by drain passes in this process (tests look at it: test_session_rows). */
extern _Atomic uint64_t ss_chunk_splits;
/* Records an output error (sticky); the stop reports it. */
void ss_drain_fail(session *s, const char *what);
/* The final sequence point's trailing drops: events dropped after each thread's last written one. */
int ss_account_trailing_drops(session *s);
#ifdef MANTRA_THREADLESS
/* The threadless streaming job of s (mantra_queue_job). */
int ss_stream_job(void *arg);
#else
/* The drain thread of s. */
void ss_drain_main(void *arg);
#endif

/* ---- session metadata ids (event_ids.c) ---- */

/* Allocates the tables of a file session (s->rows = 1); MANTRA_ENOMEM. */
int ss_ids_init(session *s);
void ss_ids_free(session *s);
/* The id of desc in s, lock-free: 0 when desc is not in the table yet, MID_NONE when it has no id;
 * the table's probing starts at ss_id_slot(desc). */
static inline uint32_t ss_id_slot(const mantra_event_desc *desc) {
    return (uint32_t)(((uintptr_t)desc >> 4) * 0x9E3779B1u) & (MID_SLOTS - 1u);
}
static inline uint32_t ss_id_lookup(const session *s, const mantra_event_desc *desc) {
    uint32_t i = ss_id_slot(desc);
    for (;;) {
        const mantra_event_desc *d = atomic_load_explicit(&s->mid_slots[i].desc, memory_order_acquire);
        if (d == desc)
            return s->mid_slots[i].mid;
        if (d == NULL)
            return 0;
        i = (i + 1u) & (MID_SLOTS - 1u);
    }
}
/* The id of desc in s, numbered now if new; 0: none (MID_MAX ids taken, or a definition the
 * nettrace writer would refuse), so its events go through raw records. Takes the session lock the
 * first time only (while the table has room for the event). */
uint32_t ss_id_of(session *s, const mantra_event_desc *desc, const mantra_provider_desc *provider);
/* Drain: defines the ids numbered since in the current file (0, or the writer's error). */
int ss_ids_define(session *s);

/* ---- output (output.c) ---- */

/* Provider name of libmantra's ProcessInfo event. */
extern const char ss_pi_provider[];
/* Opens s's output (sink and nettrace writer, or checks the listener). */
int ss_open_output(session *s);
/* Rotation: finishes the current file and opens the next (failures fail the session). 0 when the
 * old file's writer finished and is gone (even if the next one could not be opened); else it is
 * still s->w, which may still hold borrowed rows (nw_borrows_settle). */
int ss_rotate_file(session *s);
/* Writes the ProcessInfo event into s from the calling thread. */
void ss_write_process_info(session *s);

/* ---- hooks and rundown (hooks.c) ---- */

void ss_run_stopping_hooks(session *s);
/* Start hooks on the starting thread (the session is enabled). */
void ss_run_start_hooks(session *s);
/* session.c: s with a reference taken when id is a running session whose stop has not begun,
 * else NULL; the caller releases it (ss_release). */
session *ss_acquire_running(mantra_session_id id);
/* Rundown callbacks on the calling thread, into s only; phase MANTRA_RUNDOWN_AT_START or _AT_STOP. */
void ss_run_rundown(session *s, int phase);

#endif /* MANTRA_SESSION_INTERNAL_H */
