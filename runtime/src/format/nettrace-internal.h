/* nettrace-internal.h - the nettrace V5 writer's private state, shared by its files: the writer
 * object, its block buffers (nettrace_blocks.c), the thread table (nettrace_threads.c), the stack
 * table (nettrace_stacks.c), the event definitions (nettrace_definitions.c), the event rows
 * (nettrace_event_rows.c) and the public writer API (nettrace_writer.c). What the per-event path
 * needs from the tables (the thread lookup, the stack lookup, the usability check) is static inline
 * here, so writing an event makes no call it did not make before the split. Cross-file functions use
 * the prefix nw_. Private: never leaves src/.
 *
 * Format sources, as read for these files: microsoft/perfview, src/TraceEvent/EventPipe/
 * NetTraceFormat_v5.md (the V4/V5 format description) and EventPipeEventSource.cs (TraceEvent's
 * parser); dotnet/runtime, src/native/eventpipe/ep-file.c, ep-block.c and ep-stream.c (the runtime's
 * writer). */
#ifndef MANTRA_NETTRACE_INTERNAL_H
#define MANTRA_NETTRACE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/grow-internal.h"
#include "common/le-internal.h"
#include "common/varint-internal.h"
#include "mantra/event.h"
#include "mantra/nettrace_writer.h"

/* Room in front of a block's content for the object framing, BlockSize and padding (dotnet/runtime,
 * src/native/eventpipe/ep-stream.c ep_fast_serializer_write_object and ep-block.c
 * ep_block_fast_serialize): 3 tags + 3 int32 + name (<= 13) + EndObject + int32 BlockSize + 3 padding
 * = 36 bytes. */
#define NW_HEADROOM 64
/* EventBlock / MetadataBlock content header (dotnet/runtime, src/native/eventpipe/ep-block.c,
 * ep_event_block_base_serialize_header). */
#define NW_BLOCK_HEADER_SIZE 20
/* Largest compressed row header (dotnet/runtime, src/native/eventpipe/ep-block.c, the compressed
 * event header writer): flags 1, MetadataId 5, SeqDelta 5, CaptureThreadId 10, ProcNumber 5,
 * ThreadId 10, StackId 5, TimestampDelta 10, 2 GUIDs 32, PayloadSize 5. */
#define NW_ROW_HEADER_MAX 88
/* Deepest stack accepted (TraceEvent carries stack bytes in a 16-bit ETW extended-data size:
 * microsoft/perfview, src/TraceEvent/EventPipe/EventPipeEventSource.cs). */
#define NW_MAX_STACK_FRAMES 4096
#define NW_DEFAULT_BLOCK_BYTES (100u * 1024u)
/* Finished EventBlocks are kept back to back in a staging buffer of this many bytes (plus one block)
 * and reach the sink in one write when it is full, before any other object and at every flush: a
 * 100 MB trace goes out in about 1 MiB writes instead of one write per block. */
#define NW_STAGE_BYTES (1024u * 1024u)
#define NW_MIN_BLOCK_BYTES 1024u
/* Rows of a session writer's chunk (nw_write_rows) of at least this many bytes are borrowed, not
 * copied: the block records where they go and the stage writes them from the session's buffer
 * (nw_stage_flush); shorter ones are copied (a part per few rows would cost the writev more). */
#define NW_BORROW_MIN 1024u

/* Borrowed bytes of the pending or staged EventBlocks: n bytes at p go into the stream where the
 * writer's own bytes reach at (a position in the staging buffer), before what follows there. */
typedef struct nw_borrow {
    const uint8_t *at;
    const uint8_t *p;
    size_t n;
} nw_borrow;

/* Compression state: the previous row's header fields, reset per block (microsoft/perfview,
 * src/TraceEvent/EventPipe/NetTraceFormat_v5.md, compressed event headers). */
typedef struct nw_row_state {
    uint32_t metadata_id;
    uint32_t sequence;
    uint64_t capture_thread_id;
    uint32_t processor_number;
    uint64_t thread_id;
    uint32_t stack_id;
    uint64_t timestamp;
    mantra_guid activity, related;
    uint32_t payload_size;
} nw_row_state;

/* A block being assembled: content at base + NW_HEADROOM, one spare byte after it for EndObject. */
typedef struct nw_block {
    uint8_t *base;
    size_t cap; /* content capacity */
    size_t len; /* content bytes used (incl. the block's own header), borrowed ones included */
    size_t ext; /* of len, bytes borrowed (only the EventBlock): the buffer holds len - ext */
    size_t header;
    uint64_t min_ts, max_ts;
    uint32_t rows;
    int prev_ids; /* prev has a non-zero activity or related activity id */
    nw_row_state prev;
} nw_block;

typedef struct nw_event_def {
    const mantra_event_desc *desc; /* NULL for raw definitions */
    uint8_t *record;               /* metadata record, first 4 bytes = id once assigned */
    size_t record_size;
    uint32_t metadata_id;          /* 0 until first use */
} nw_event_def;

typedef struct nw_thread {
    uint64_t capture_thread_id;
    uint32_t last_sequence;
    int has_events;
    uint64_t last_timestamp;
} nw_thread;

typedef struct nw_stack {
    uint32_t offset, frames; /* into stack_ips */
    uint64_t hash;
} nw_stack;

struct mantra_nettrace_writer {
    mantra_sink *sink;
    mantra_nettrace_options opts;
    int failed;   /* sticky output error */
    int finished;
    char err[256];

    nw_block events, meta, stacks;

    /* definitions: keys are index + 1 */
    nw_event_def *defs;
    uint32_t def_count;
    size_t def_cap;
    uint32_t *desc_slots; /* open addressing: key of a desc definition, 0 = empty */
    uint32_t desc_slot_count;
    uint32_t next_metadata_id;

    /* capture threads in order of first appearance */
    nw_thread *threads;
    uint32_t thread_count;
    size_t thread_cap;
    uint32_t *thread_slots; /* index + 1, 0 = empty */
    uint32_t thread_slot_count;
    uint64_t prev_capture_thread; /* of the previous event in file order (CALLER_RUNS check) */

    /* stacks of the current sequence-point region: ids are index + 1 */
    nw_stack *stack_list;
    uint32_t stack_count;
    size_t stack_cap;
    uint64_t *stack_ips;
    size_t stack_ips_len, stack_ips_cap;
    uint32_t *stack_slots; /* id, 0 = empty */
    uint32_t stack_slot_count;
    uint32_t stack_first_pending; /* id of the first stack in the pending StackBlock */
    uint32_t empty_stack_id;      /* id of the size-0 stack in the current region, 0: none yet */
    uint32_t last_thread;         /* index + 1 of the thread of the previous event (fast lookup) */

    uint8_t *sp_buf;
    size_t sp_cap;

    /* staged EventBlock objects [stage_begin, stage_end) in stage_buf, not yet written to the sink;
     * the pending EventBlock's buffer (events.base) is inside stage_buf too */
    uint8_t *stage_buf, *stage_begin, *stage_end;
    size_t stage_cap;
    /* borrowed bytes (nw_write_rows): borrows[0 .. staged_borrows) of the staged blocks (stage_ext
     * bytes), then the pending block's; borrows_taken / borrows_done count every borrow since the
     * writer began and those written out (or given up when the writer failed) */
    nw_borrow *borrows;
    size_t nborrows, borrow_cap, staged_borrows;
    size_t borrow_min; /* NW_BORROW_MIN where the sink gathers parts (mantra_sink_gathers), else
                        * SIZE_MAX: every run copied */
    uint64_t stage_ext, borrows_taken, borrows_done;

    uint64_t max_timestamp;
    int have_events;
    uint64_t last_sp_offset;
    mantra_nettrace_stats st;
};

/* ---- shared helpers ------------------------------------------------------------------------------ */

/* Formats the writer's last error and returns code (nettrace_writer.c). */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 3, 4)))
#endif
int nw_fail(mantra_nettrace_writer *w, int code, const char *fmt, ...);

static inline int nw_check_usable(mantra_nettrace_writer *w) {
    if (w->failed)
        return w->failed;
    if (w->finished)
        return nw_fail(w, MANTRA_ESTATE, "the trace is finished");
    return MANTRA_OK;
}

static inline uint64_t nw_mix64(uint64_t x) {
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    x ^= x >> 33;
    x *= UINT64_C(0xc4ceb9fe1a85ec53);
    x ^= x >> 33;
    return x;
}

/* ---- stream framing and blocks (nettrace_blocks.c) -------------------------------------------------- */

/* Stream bytes of the staged blocks, borrowed ones included. */
static inline uint64_t nw_staged_bytes(const mantra_nettrace_writer *w) {
    return (uint64_t)(w->stage_end - w->stage_begin) + w->stage_ext;
}
/* The stream offset of the next object: bytes written to the sink plus the staged ones. */
static inline uint64_t nw_offset(const mantra_nettrace_writer *w) {
    return mantra_sink_bytes_written(w->sink) + nw_staged_bytes(w);
}
/* Where a block's next content byte goes in its buffer. */
static inline uint8_t *nw_block_end(const nw_block *b) { return b->base + NW_HEADROOM + (b->len - b->ext); }
/* Writes n bytes to the sink after the staged blocks; an error becomes the writer's sticky error.
 * Updates st.bytes. */
int nw_sink_write(mantra_nettrace_writer *w, const void *p, size_t n);
/* Writes the staged blocks to the sink (nothing staged: nothing to do). */
int nw_stage_flush(mantra_nettrace_writer *w);
/* Allocates the staging buffer and places the pending EventBlock at its start (cap: the block's
 * content capacity). */
int nw_stage_init(mantra_nettrace_writer *w, size_t cap);
/* The stream header and the Trace object (the writer's first bytes). */
int nw_write_trace_object(mantra_nettrace_writer *w);
/* Allocates a block buffer of cap content bytes whose own header is `header` bytes. */
int nw_block_init(nw_block *b, size_t cap, size_t header);
/* Writes the pending MetadataBlock, StackBlock and EventBlock, in that order. */
int nw_flush_blocks(mantra_nettrace_writer *w);
/* Flushes, then writes an SPBlock listing every capture thread; stack ids restart after it. */
int nw_write_sequence_point(mantra_nettrace_writer *w);

/* ---- the thread table (nettrace_threads.c) ---------------------------------------------------------- */

/* The entry of a capture thread, or NULL (per event: inline). */
static inline nw_thread *nw_find_thread(mantra_nettrace_writer *w, uint64_t tid) {
    if (!w->thread_slots)
        return NULL;
    if (w->last_thread && w->threads[w->last_thread - 1].capture_thread_id == tid)
        return &w->threads[w->last_thread - 1]; /* runs of one thread's events are the rule */
    uint32_t mask = w->thread_slot_count - 1;
    for (uint32_t i = (uint32_t)nw_mix64(tid) & mask;; i = (i + 1) & mask) {
        uint32_t k = w->thread_slots[i];
        if (k == 0)
            return NULL;
        if (w->threads[k - 1].capture_thread_id == tid) {
            w->last_thread = k;
            return &w->threads[k - 1];
        }
    }
}

/* Appends a capture thread (not present yet); NULL when out of memory. */
nw_thread *nw_add_thread(mantra_nettrace_writer *w, uint64_t tid);

/* ---- the stack table (nettrace_stacks.c) ------------------------------------------------------------ */

/* Forgets the stacks of the region that a sequence point closes. */
void nw_stacks_new_region(mantra_nettrace_writer *w);
/* Appends a new stack (hash h, not in the table) to the table and the pending StackBlock, flushing
 * the pending blocks first when it is full. Its id, or 0 on allocation/IO failure. */
uint32_t nw_stack_add(mantra_nettrace_writer *w, const uint64_t *ips, uint32_t frames, uint64_t h);

static inline uint64_t nw_stack_ip_mask(const mantra_nettrace_writer *w) {
    return w->opts.pointer_size == 4 ? UINT64_C(0xffffffff) : UINT64_MAX;
}

/* The id of this stack in the current region; a new one is added with nw_stack_add(). Most events
 * have no stack: their size-0 entry's id is kept for the region. Returns 0 on allocation/IO failure. */
static inline uint32_t nw_stack_id(mantra_nettrace_writer *w, const uint64_t *ips, uint32_t frames) {
    if (frames == 0 && w->empty_stack_id)
        return w->empty_stack_id;
    uint64_t mask_ip = nw_stack_ip_mask(w);
    uint64_t h = nw_mix64(frames);
    for (uint32_t i = 0; i < frames; i++)
        h = nw_mix64(h ^ (ips[i] & mask_ip));
    uint32_t id = 0;
    if (w->stack_slots) {
        uint32_t mask = w->stack_slot_count - 1;
        for (uint32_t i = (uint32_t)h & mask;; i = (i + 1) & mask) {
            uint32_t found = w->stack_slots[i];
            if (found == 0)
                break;
            const nw_stack *e = &w->stack_list[found - 1];
            if (e->hash == h && e->frames == frames) {
                const uint64_t *s = w->stack_ips + e->offset;
                uint32_t k = 0;
                while (k < frames && s[k] == (ips[k] & mask_ip))
                    k++;
                if (k == frames) {
                    id = found;
                    break;
                }
            }
        }
    }
    if (id == 0)
        id = nw_stack_add(w, ips, frames, h);
    if (frames == 0)
        w->empty_stack_id = id;
    return id;
}

/* ---- the session drain's fast path (nettrace_event_rows.c) --------------------------------------- */

/* The session drain's run path: a cursor over the pending EventBlock that appends plain rows (as
 * mantra_nettrace_write() would, byte for byte, for events without stack, activity ids, processor
 * number or a thread id of their own) with the per-block checks made once when it opens and the
 * per-thread ones once per thread switch, so that a row costs its header, its payload copy and a
 * few compares. Global order mode only. While a cursor is open nothing else may touch the writer:
 * nw_plain_close() writes its state back (block header fields, previous row, thread table,
 * statistics) before any other writer call. */
typedef struct nw_plain {
    mantra_nettrace_writer *w;
    uint8_t *start, *out, *room; /* rows start at start, the next goes at out; payload + out <= room fits */
    nw_thread *t;                /* the current thread's entry (NULL: none chosen) */
    uint64_t tid;                /* the current thread */
    int fresh;                   /* the previous row is not the current thread's plain row */
    int global;                  /* the writer is in global order mode */
    uint32_t stack_id;           /* the region's empty stack */
    uint32_t rows;               /* rows appended */
    uint64_t lo_ts, hi_ts;       /* the oldest row; the newest row before the current thread's */
    uint64_t max_ts;             /* the writer's newest row when opened */
    uint64_t sorted_upto;        /* rows not newer than this are IsSorted (UINT64_MAX when opened);
                                  * CALLER_RUNS mode: the caller lowers it to a run's bound */
    uint64_t prev_capture;       /* the writer's previous capture thread when opened */
    nw_row_state prev;           /* the previous row (activity ids stay zero) */
} nw_plain;

/* Opens a cursor on w: 0 when the writer cannot take plain rows now (failed or finished, no event
 * written yet, previous row with activity ids, no empty stack in the region, sequence point due).
 * Global order mode: every row IsSorted, none older than the writer's newest. CALLER_RUNS mode: a
 * row is IsSorted when not newer than c->sorted_upto (which the caller sets: the oldest event any
 * other thread still has to write, so that the flag is true), a thread's rows in time order, and
 * the capture thread changes only on a sorted row (else the row takes the general path). */
int nw_plain_open(mantra_nettrace_writer *w, nw_plain *c);
/* Makes tid the thread of the next rows: 0 when its entry is missing or has no event yet (its
 * first event takes the general path). *hint: the entry's index + 1 as last found, checked and
 * updated (a stale hint costs a hash lookup). */
int nw_plain_thread(nw_plain *c, uint64_t tid, uint32_t *hint);
/* Writes the cursor's state back into its writer. */
void nw_plain_close(nw_plain *c);
/* nw_plain_row() for the first row after opening or a thread switch: every header field compared
 * (nettrace_event_rows.c). */
int nw_plain_first_row(nw_plain *c, uint32_t mid, uint32_t seq, uint64_t ts, const uint8_t *payload, uint32_t size);

/* The metadata id of key in w (0: not used yet in this file or not a key; the general path
 * assigns it). */
static inline uint32_t nw_key_metadata_id(const mantra_nettrace_writer *w, mantra_nettrace_event_key key) {
    return key && key <= w->def_count ? w->defs[key - 1].metadata_id : 0;
}

/* ---- definitions numbered by the caller, and rows encoded by the caller (nettrace_event_rows.c) ---- */

/* Makes id the metadata id of key and queues its MetadataBlock row now (a session numbers its
 * events itself: session/event_ids.c). MANTRA_EINVAL when key has another id already. The caller
 * keeps its ids apart from the ones the writer gives on first use (nw_reserve_ids). */
int nw_define_id(mantra_nettrace_writer *w, mantra_nettrace_event_key key, uint32_t id);
/* Would mantra_nettrace_add_event take this event? (its metadata record fits a payload, the
 * provider name is UTF-8) */
int nw_event_fits(const mantra_provider_desc *provider, const mantra_event_desc *desc);
/* The writer's own ids (a definition's first use) start above n. */
static inline void nw_reserve_ids(mantra_nettrace_writer *w, uint32_t n) {
    if (w->next_metadata_id <= n)
        w->next_metadata_id = n + 1u;
}

/* One thread's rows as a session writer encoded them: the first by its fields, the rest compressed
 * against it (flags 0x01, 0x02 with this thread as capture thread and processor 0xFFFFFFFF, 0x80;
 * no stack, thread or activity fields, never IsSorted), ending with the row last_*. */
typedef struct nw_rows {
    uint32_t seq, size;
    uint64_t ts;
    const uint8_t *payload; /* readable up to the next multiple of 8 */
    const uint8_t *rest;
    size_t rest_len;
    uint32_t rest_rows;
    uint32_t last_mid, last_seq, last_size;
    uint64_t last_ts;
} nw_rows;
/* Writes r's rows of thread tid into one EventBlock (flushing the pending one first when they do not
 * fit): the first row as mantra_nettrace_write() would, event key key (its metadata id defined),
 * IsSorted when ts <= sorted_upto; then the rest as they are: borrowed when at least NW_BORROW_MIN
 * bytes, so the caller keeps r->rest's bytes unchanged until nw_borrows_done() reaches the
 * nw_borrows_taken() that follows this call (nw_borrows_settle() gets there at once). */
int nw_write_rows(mantra_nettrace_writer *w, mantra_nettrace_event_key key, uint64_t tid, uint32_t *hint,
                  const nw_rows *r, uint64_t sorted_upto);
/* Borrows so far, and of them those the writer no longer needs: written, or given up when the
 * writer failed. */
static inline uint64_t nw_borrows_taken(const mantra_nettrace_writer *w) { return w->borrows_taken; }
static inline uint64_t nw_borrows_done(const mantra_nettrace_writer *w) {
    return w->failed ? w->borrows_taken : w->borrows_done;
}
/* Writes out the pending EventBlock and the staged ones when they hold borrowed bytes, so that
 * none is needed any more: afterwards nw_borrows_done() == nw_borrows_taken(), the writer failed
 * when they could not be written. */
void nw_borrows_settle(mantra_nettrace_writer *w);

/* cm_varint_put() with the one- and two-byte cases first (timestamp deltas, sizes, ids). */
static inline size_t nw_varint_put(uint8_t *out, uint64_t v) {
    if (v < 0x80) {
        out[0] = (uint8_t)v;
        return 1;
    }
    if (v < 0x4000) {
        out[0] = (uint8_t)(v | 0x80);
        out[1] = (uint8_t)(v >> 7);
        return 2;
    }
    return cm_varint_put(out, v);
}

/* Copies a payload readable up to the next multiple of 8 into a block with NW_ROW_HEADER_MAX bytes
 * of slack after it: small ones as whole 8-byte words. */
static inline void nw_plain_copy(uint8_t *p, const uint8_t *payload, uint32_t size) {
    if (size <= 8)
        memcpy(p, payload, 8);
    else if (size <= 16)
        memcpy(p, payload, 16);
    else
        memcpy(p, payload, size);
}

/* Largest header nw_plain_header() writes: flags, MetadataId 5, the gap 5 + 10 + 5, TimeStampDelta
 * 10, PayloadSize 5. */
#define NW_PLAIN_HEADER_MAX 41u

/* The compressed header of a plain row (stack, thread and activity ids those of the row before)
 * against the previous row's metadata id, sequence, timestamp and payload size: flags (sorted: 0x40
 * or 0), the MetadataId when it changes, after a gap in the sequence (dropped events) its delta - 1
 * with capture thread tid and processor 0xFFFFFFFF as before, the TimeStampDelta (ts not older than
 * pts), the PayloadSize when it changes (microsoft/perfview, src/TraceEvent/EventPipe/
 * NetTraceFormat_v5.md, compressed headers). Returns where the payload goes. The cursor's rows
 * (nw_plain_row) and a file session's writers (session/dispatch.c, row_put) both write it. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((always_inline))
#endif
static inline uint8_t *nw_plain_header(uint8_t *out, uint32_t pmid, uint32_t pseq, uint64_t pts, uint32_t psize,
                                       uint32_t mid, uint32_t seq, uint64_t ts, uint32_t size, uint64_t tid,
                                       uint8_t sorted) {
    uint8_t *p = out + 1;
    uint8_t flags = sorted;
    if (MANTRA_UNLIKELY(mid != pmid)) {
        flags |= 0x01;
        p += nw_varint_put(p, mid);
    }
    if (MANTRA_UNLIKELY(seq != pseq + 1u)) {
        flags |= 0x02;
        p += nw_varint_put(p, (uint32_t)(seq - pseq - 1u));
        p += cm_varint_put(p, tid);
        p += cm_varint_put(p, 0xFFFFFFFFu);
    }
    p += nw_varint_put(p, ts - pts);
    if (size != psize) {
        flags |= 0x80;
        p += nw_varint_put(p, size);
    }
    out[0] = flags;
    return p;
}

/* Appends a plain row of the current thread: metadata id mid (non-zero), sequence seq, timestamp
 * ts, size payload bytes, which must be readable up to the next multiple of 8, IsSorted as
 * c->sorted_upto decides it. Returns 0 (and writes nothing) when the row needs the general path:
 * the block is full, ts is older than the writer's newest row, seq is 0 or the payload is too
 * large. The fields are read into locals and stored once: the payload's byte stores could alias
 * them otherwise. */
static inline int nw_plain_row(nw_plain *restrict c, uint32_t mid, uint32_t seq, uint64_t ts,
                               const uint8_t *payload, uint32_t size) {
    if (MANTRA_UNLIKELY(c->fresh))
        return nw_plain_first_row(c, mid, seq, ts, payload, size);
    uint8_t *out = c->out;
    uint32_t pseq = c->prev.sequence, pmid = c->prev.metadata_id, psize = c->prev.payload_size;
    uint64_t pts = c->prev.timestamp;
    /* the previous row is this thread's plain row, so not newer than the writer's newest */
    if (MANTRA_UNLIKELY(out + size > c->room || ts < pts || seq == 0 || size > MANTRA_MAX_PAYLOAD))
        return 0;
    uint8_t *p = nw_plain_header(out, pmid, pseq, pts, psize, mid, seq, ts, size, c->tid,
                                 ts <= c->sorted_upto ? 0x40 : 0);
    nw_plain_copy(p, payload, size);
    c->out = p + size;
    c->rows++;
    c->prev.metadata_id = mid;
    c->prev.payload_size = size;
    c->prev.sequence = seq;
    c->prev.timestamp = ts;
    return 1;
}

/* One plain row through a cursor of its own (open, thread, row, close): the session drain's events
 * that come on their own. mid: nw_key_metadata_id() of the event's key; *hint as for
 * nw_plain_thread(); CALLER_RUNS mode: the row is IsSorted when ts <= sorted_upto (global order: always).
 * The payload must be readable up to the next multiple of 8. Returns 1 when written, 0 when the event
 * needs mantra_nettrace_write() (whatever the cursor cannot take: nw_plain_open, nw_plain_thread,
 * nw_plain_row), which then checks, refuses or writes it. */
int nw_plain_one(mantra_nettrace_writer *w, uint32_t mid, uint64_t tid, uint32_t *hint, uint32_t seq, uint64_t ts,
                 uint64_t sorted_upto, const uint8_t *payload, uint32_t size);

/* Bytes of finished objects so far (staged ones included), and since the last sequence point
 * (pending blocks excluded). */
static inline uint64_t nw_bytes(const mantra_nettrace_writer *w) { return w->st.bytes; }
static inline uint64_t nw_bytes_since_sp(const mantra_nettrace_writer *w) { return w->st.bytes - w->last_sp_offset; }

#endif /* MANTRA_NETTRACE_INTERNAL_H */
