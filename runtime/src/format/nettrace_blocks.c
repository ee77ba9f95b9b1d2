/* nettrace_blocks.c - the nettrace writer's stream framing and blocks: the stream header and the
 * Trace object, block objects (FastSerialization framing, BlockSize, padding to the absolute
 * offset, EndObject), the block buffers and their flush order, and the SPBlock (sequence point).
 *
 * Sources: microsoft/perfview, src/TraceEvent/EventPipe/NetTraceFormat_v5.md (stream header,
 * object framing, Trace object, block layouts); dotnet/runtime, src/native/eventpipe/ep-stream.c
 * (ep_fast_serializer_write_object: tags and framing), ep-block.c (ep_block_fast_serialize: BlockSize
 * and padding; ep_event_block_base_serialize_header; ep_sequence_point_block_init) and ep-file.c
 * (file_fast_serialize_func: the Trace object; ep_file_flush: Metadata, Stack, then Event blocks). */
#include <stdlib.h>
#include <string.h>

#include "format/nettrace-internal.h"
#include "platform/platform-internal.h"

/* The sink's result as the writer's: an error becomes its sticky error. */
static int sink_result(mantra_nettrace_writer *w, int rc) {
    if (rc != MANTRA_OK) {
        w->failed = rc;
        w->st.io_errors++;
        nw_fail(w, rc, "output error: %s", mantra_sink_last_error(w->sink));
    }
    return rc;
}

static int sink_write(mantra_nettrace_writer *w, const void *p, size_t n) {
    return sink_result(w, mantra_sink_write(w->sink, p, n));
}

/* The staged bytes with their borrowed ones in between, as one gathered write. */
#define FLUSH_PARTS 64u
static int sink_write_borrowed(mantra_nettrace_writer *w) {
    mantra_sink_part parts[FLUSH_PARTS];
    const uint8_t *own = w->stage_begin;
    size_t n = 0;
    for (size_t i = 0; i < w->staged_borrows; i++) {
        const nw_borrow *b = &w->borrows[i];
        if (n + 3 > FLUSH_PARTS) { /* room for these two and the last */
            int rc = mantra_sink_write_parts(w->sink, parts, n);
            if (rc != MANTRA_OK)
                return rc;
            n = 0;
        }
        parts[n++] = (mantra_sink_part){own, (size_t)(b->at - own)};
        parts[n++] = (mantra_sink_part){b->p, b->n};
        own = b->at;
    }
    parts[n++] = (mantra_sink_part){own, (size_t)(w->stage_end - own)};
    return mantra_sink_write_parts(w->sink, parts, n);
}

int nw_stage_flush(mantra_nettrace_writer *w) {
    if (w->stage_begin == w->stage_end)
        return MANTRA_OK;
    int rc = w->staged_borrows ? sink_result(w, sink_write_borrowed(w))
                               : sink_write(w, w->stage_begin, (size_t)(w->stage_end - w->stage_begin));
    /* the pending block's borrows move to the front */
    w->borrows_done += w->staged_borrows;
    if (w->staged_borrows && w->nborrows > w->staged_borrows)
        memmove(w->borrows, w->borrows + w->staged_borrows, (w->nborrows - w->staged_borrows) * sizeof *w->borrows);
    w->nborrows -= w->staged_borrows;
    w->staged_borrows = 0;
    w->stage_ext = 0;
    w->stage_begin = w->stage_end = NULL;
    w->st.bytes = nw_offset(w);
    return rc;
}

void nw_borrows_settle(mantra_nettrace_writer *w) {
    if (w->failed || w->borrows_done == w->borrows_taken)
        return;
    int rc = nw_flush_blocks(w);
    if (rc == MANTRA_OK)
        rc = nw_stage_flush(w);
    if (w->borrows_done != w->borrows_taken && !w->failed) {
        /* an error that left the writer usable (out of memory, say; its message stays): the
         * bytes cannot be written any more, so the writer fails and gives them up */
        w->failed = rc != MANTRA_OK ? rc : nw_fail(w, MANTRA_ESTATE, "borrowed rows could not be written out");
    }
}

int nw_sink_write(mantra_nettrace_writer *w, const void *p, size_t n) {
    int rc = nw_stage_flush(w);
    if (rc == MANTRA_OK)
        rc = sink_write(w, p, n);
    w->st.bytes = nw_offset(w);
    return rc;
}

int nw_write_trace_object(mantra_nettrace_writer *w) {
    uint16_t st[8];
    int64_t ms = w->opts.sync_time_unix_ms;
    if (ms == MANTRA_NETTRACE_TIME_NOW) {
        ms = mantra_pal_unix_ms();
    }
    if (mantra_nettrace_systemtime(ms, st) != MANTRA_OK)
        return nw_fail(w, MANTRA_EINVAL, "sync time %lld ms is outside years 1601..30827", (long long)ms);
    uint8_t buf[128], *p = buf;
    /* stream header: "Nettrace", then the serializer's name as int32 length + text */
    memcpy(p, "Nettrace", 8);
    p = cm_store_u32(p + 8, 20);
    memcpy(p, "!FastSerialization.1", 20);
    p += 20;
    /* Trace object, version 4, minimum reader version 4 */
    *p++ = 0x05;
    *p++ = 0x05;
    *p++ = 0x01;
    p = cm_store_u32(p, 4);
    p = cm_store_u32(p, 4);
    p = cm_store_u32(p, 5);
    memcpy(p, "Trace", 5);
    p += 5;
    *p++ = 0x06;
    /* Trace payload, 48 bytes (ep-file.c file_fast_serialize_func) */
    for (int i = 0; i < 8; i++)
        p = cm_store_u16(p, st[i]);
    p = cm_store_u64(p, w->opts.sync_time_ticks);
    p = cm_store_u64(p, w->opts.ticks_per_second);
    p = cm_store_u32(p, w->opts.pointer_size);
    p = cm_store_u32(p, w->opts.process_id);
    p = cm_store_u32(p, w->opts.processor_count);
    p = cm_store_u32(p, w->opts.sampling_rate_ns);
    *p++ = 0x06;
    return nw_sink_write(w, buf, (size_t)(p - buf));
}

/* Bytes of a block object's framing before its content when the object starts at stream offset
 * offset: tags, Version, MinReaderVersion, NameLength, name, EndObject (of the type), BlockSize, and
 * the padding that puts the content at a 4-byte offset (ep_block_fast_serialize). */
static size_t block_prefix(uint64_t offset, size_t name_len) {
    size_t frame = 3 + 12 + name_len + 1;
    uint64_t after_size = offset + frame + 4;
    return frame + 4 + (size_t)((4 - (after_size & 3)) & 3);
}

/* Fills in the framing of a block object of len content bytes, own of them at content (the rest
 * borrowed: nw_write_rows), with NW_HEADROOM bytes before it and one spare byte after it, for an
 * object starting at stream offset offset: framing, BlockSize, padding, content, EndObject.
 * Returns the object's first byte; *size: its bytes in the buffer. */
static uint8_t *frame_block_object(uint8_t *content, size_t len, size_t own, const char *name, uint64_t offset,
                                   size_t *size) {
    size_t name_len = strlen(name);
    size_t prefix = block_prefix(offset, name_len), frame = 3 + 12 + name_len + 1;
    uint8_t *p = content - prefix, *start = p;
    *p++ = 0x05; /* BeginPrivateObject (object) */
    *p++ = 0x05; /* BeginPrivateObject (type) */
    *p++ = 0x01; /* NullReference: type of the type */
    p = cm_store_u32(p, 2); /* Version: every block is 2 */
    p = cm_store_u32(p, 2); /* MinimumReaderVersion */
    p = cm_store_u32(p, (uint32_t)name_len);
    memcpy(p, name, name_len);
    p += name_len;
    *p++ = 0x06; /* EndObject (type) */
    p = cm_store_u32(p, (uint32_t)len);
    memset(p, 0, prefix - frame - 4);
    content[own] = 0x06; /* EndObject (object) */
    *size = prefix + own + 1;
    return start;
}

/* Writes a block object (frame_block_object) as a single sink write, after the staged blocks. */
static int write_block_object(mantra_nettrace_writer *w, uint8_t *content, size_t len, const char *name) {
    size_t n;
    uint8_t *start = frame_block_object(content, len, len, name, nw_offset(w), &n);
    return nw_sink_write(w, start, n);
}

/* The pending EventBlock's buffer after the staged objects: where its object will start when it is
 * finished with nothing written in between, so that it joins them; at the buffer's start (after
 * writing the staged ones) when a whole block would not fit after them. */
static int place_events_block(mantra_nettrace_writer *w) {
    uint8_t *content = w->stage_buf + NW_HEADROOM;
    if (w->stage_end && nw_staged_bytes(w) < NW_STAGE_BYTES) {
        /* (in stream bytes, borrowed ones included: they hold the session's buffers) */
        uint8_t *after = w->stage_end + block_prefix(nw_offset(w), strlen("EventBlock"));
        if (after + w->events.cap + 1 <= w->stage_buf + w->stage_cap)
            content = after;
    }
    if (content == w->stage_buf + NW_HEADROOM && nw_stage_flush(w) != MANTRA_OK)
        return w->failed;
    w->events.base = content - NW_HEADROOM;
    return MANTRA_OK;
}

int nw_stage_init(mantra_nettrace_writer *w, size_t cap) {
    w->stage_cap = NW_HEADROOM + cap + 1 + NW_STAGE_BYTES;
    w->stage_buf = malloc(w->stage_cap);
    if (!w->stage_buf)
        return MANTRA_ENOMEM;
    w->stage_begin = w->stage_end = NULL;
    w->events.base = w->stage_buf;
    return MANTRA_OK;
}

/* Finishes the pending EventBlock's object and stages it: it joins the staged objects when it starts
 * where they end (nothing was written since the buffer was placed), else they are written first
 * (the object's framing may then reach back into their last bytes). */
static int stage_events_block(mantra_nettrace_writer *w) {
    uint8_t *content = w->events.base + NW_HEADROOM;
    uint64_t offset = nw_offset(w);
    if (w->stage_end && content - block_prefix(offset, strlen("EventBlock")) != w->stage_end &&
        nw_stage_flush(w) != MANTRA_OK)
        return w->failed;
    size_t n;
    nw_block *b = &w->events;
    uint8_t *start = frame_block_object(content, b->len, b->len - b->ext, "EventBlock", offset, &n);
    if (!w->stage_end)
        w->stage_begin = start;
    w->stage_end = start + n;
    w->staged_borrows = w->nborrows;
    w->stage_ext += w->events.ext;
    w->st.bytes = nw_offset(w);
    return MANTRA_OK;
}

static void block_reset(nw_block *b) {
    b->len = b->header;
    b->ext = 0;
    b->rows = 0;
    b->min_ts = UINT64_MAX;
    b->max_ts = 0;
    b->prev_ids = 0;
    memset(&b->prev, 0, sizeof b->prev);
}

int nw_block_init(nw_block *b, size_t cap, size_t header) {
    b->base = malloc(NW_HEADROOM + cap + 1);
    if (!b->base)
        return MANTRA_ENOMEM;
    b->cap = cap;
    b->header = header;
    block_reset(b);
    return MANTRA_OK;
}

/* Event/Metadata block header (ep_event_block_base_serialize_header): HeaderSize 20, Flags 1
 * (compressed), Min/MaxTimestamp. */
static void finish_event_header(nw_block *b) {
    uint8_t *c = b->base + NW_HEADROOM;
    cm_store_u16(c, NW_BLOCK_HEADER_SIZE);
    cm_store_u16(c + 2, 1);
    cm_store_u64(c + 4, b->rows ? b->min_ts : 0);
    cm_store_u64(c + 12, b->max_ts);
}

/* Metadata first, then stacks, then events (ep-file.c ep_file_flush): an event's metadata id and
 * stack id are defined before the EventBlock that uses them. */
int nw_flush_blocks(mantra_nettrace_writer *w) {
    int rc;
    if (w->failed)
        return w->failed;
    if (w->meta.rows) {
        finish_event_header(&w->meta);
        if ((rc = write_block_object(w, w->meta.base + NW_HEADROOM, w->meta.len, "MetadataBlock")) != MANTRA_OK)
            return rc;
        w->st.metadata_blocks++;
        block_reset(&w->meta);
    }
    if (w->stacks.rows) {
        /* StackBlock: FirstId, Count, then the entries. */
        uint8_t *c = w->stacks.base + NW_HEADROOM;
        cm_store_u32(c, w->stack_first_pending);
        cm_store_u32(c + 4, w->stacks.rows);
        if ((rc = write_block_object(w, c, w->stacks.len, "StackBlock")) != MANTRA_OK)
            return rc;
        w->st.stack_blocks++;
        w->stack_first_pending += w->stacks.rows;
        block_reset(&w->stacks);
    }
    if (w->events.rows) {
        finish_event_header(&w->events);
        if ((rc = stage_events_block(w)) != MANTRA_OK)
            return rc;
        w->st.event_blocks++;
        block_reset(&w->events);
        if ((rc = place_events_block(w)) != MANTRA_OK)
            return rc;
    }
    return MANTRA_OK;
}

/* SPBlock (ep-block.c ep_sequence_point_block_init): Timestamp, ThreadCount, then (CaptureThreadId,
 * SequenceNumber) per thread. */
int nw_write_sequence_point(mantra_nettrace_writer *w) {
    int rc = nw_flush_blocks(w);
    if (rc != MANTRA_OK)
        return rc;
    size_t len = 12 + 12 * (size_t)w->thread_count;
    if (NW_HEADROOM + len + 1 > w->sp_cap) {
        uint8_t *b = realloc(w->sp_buf, NW_HEADROOM + len + 1);
        if (!b)
            return nw_fail(w, MANTRA_ENOMEM, "out of memory for a sequence point");
        w->sp_buf = b;
        w->sp_cap = NW_HEADROOM + len + 1;
    }
    uint8_t *c = w->sp_buf + NW_HEADROOM, *p = c;
    p = cm_store_u64(p, w->max_timestamp);
    p = cm_store_u32(p, w->thread_count);
    for (uint32_t i = 0; i < w->thread_count; i++) {
        p = cm_store_u64(p, w->threads[i].capture_thread_id);
        p = cm_store_u32(p, w->threads[i].last_sequence);
    }
    if ((rc = write_block_object(w, c, len, "SPBlock")) != MANTRA_OK)
        return rc;
    w->st.sequence_points++;
    nw_stacks_new_region(w);
    w->last_sp_offset = nw_offset(w);
    return MANTRA_OK;
}
