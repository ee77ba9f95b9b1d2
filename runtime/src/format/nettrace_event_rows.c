/* nettrace_event_rows.c - the nettrace writer's per-event path: the checks and ordering rules, the
 * metadata row of a definition's first use, the compressed row header against the previous row of
 * the block, the payload (bytes or mantra_data descriptors) and the bookkeeping after it. Hot: the
 * helpers it needs from the thread and stack tables are inline in nettrace-internal.h.
 *
 * Sources: microsoft/perfview, src/TraceEvent/EventPipe/NetTraceFormat_v5.md (compressed headers:
 * flag bits and field order) and EventPipeEventSource.cs (ReadFromFormatV4: how TraceEvent decodes
 * them); dotnet/runtime, src/native/eventpipe/ep-block.c (the runtime's compressed header writer;
 * metadata rows with MetadataId 0 and IsSorted) and ep-buffer-manager.c
 * (ep_buffer_manager_write_all_buffers_to_file_v4: per-thread runs, IsSorted on the first row of a
 * run). */
#include <stdlib.h>
#include <string.h>

#include "common/varint-internal.h"
#include "format/nettrace-internal.h"

static const mantra_guid zero_guid;

static int guid_eq(const mantra_guid *a, const mantra_guid *b) {
    return a->data1 == b->data1 && a->data2 == b->data2 && a->data3 == b->data3 &&
           memcmp(a->data4, b->data4, 8) == 0;
}

/* Encodes a row header for `row` against prev into out; returns its length. */
static size_t encode_row_header(const nw_row_state *prev, const nw_row_state *row, int sorted, uint8_t *out) {
    uint8_t flags = 0;
    uint8_t *p = out + 1;
    if (row->metadata_id != prev->metadata_id) {
        flags |= 0x01;
        p += cm_varint_put(p, row->metadata_id);
    }
    /* Seq = prevSeq + SeqDelta + 1 when 0x02 is set, else prevSeq + (MetadataId != 0), 32-bit wrap. */
    uint32_t implied = prev->sequence + (row->metadata_id != 0 ? 1u : 0u);
    if (row->sequence != implied || row->capture_thread_id != prev->capture_thread_id ||
        row->processor_number != prev->processor_number) {
        flags |= 0x02;
        p += cm_varint_put(p, (uint32_t)(row->sequence - prev->sequence - 1u));
        p += cm_varint_put(p, row->capture_thread_id);
        p += cm_varint_put(p, row->processor_number);
    }
    if (row->thread_id != prev->thread_id) {
        flags |= 0x04;
        p += cm_varint_put(p, row->thread_id);
    }
    if (row->stack_id != prev->stack_id) {
        flags |= 0x08;
        p += cm_varint_put(p, row->stack_id);
    }
    /* Always present; 64-bit wrap-around delta ("negative" deltas are 10-byte varints). */
    p += cm_varint_put(p, row->timestamp - prev->timestamp);
    if (!guid_eq(&row->activity, &prev->activity)) {
        flags |= 0x10;
        p = cm_store_guid(p, &row->activity);
    }
    if (!guid_eq(&row->related, &prev->related)) {
        flags |= 0x20;
        p = cm_store_guid(p, &row->related);
    }
    if (sorted)
        flags |= 0x40;
    if (row->payload_size != prev->payload_size) {
        flags |= 0x80;
        p += cm_varint_put(p, row->payload_size);
    }
    out[0] = flags;
    return (size_t)(p - out);
}

static void block_note_row(nw_block *b, const nw_row_state *row) {
    b->prev = *row;
    b->prev_ids = !guid_eq(&row->activity, &zero_guid) || !guid_eq(&row->related, &zero_guid);
    b->rows++;
    if (row->timestamp < b->min_ts)
        b->min_ts = row->timestamp;
    if (row->timestamp > b->max_ts)
        b->max_ts = row->timestamp;
}

/* A definition's first use: its metadata id, and its row (MetadataId 0, IsSorted, the record as
 * payload) in the pending MetadataBlock. */
static int define(mantra_nettrace_writer *w, nw_event_def *d, uint32_t id, uint64_t ts) {
    int rc;
    if (w->meta.rows && w->meta.len + NW_ROW_HEADER_MAX + d->record_size > w->opts.block_bytes &&
        (rc = nw_flush_blocks(w)) != MANTRA_OK)
        return rc;
    d->metadata_id = id;
    cm_store_u32(d->record, d->metadata_id);
    nw_row_state mr;
    memset(&mr, 0, sizeof mr);
    mr.timestamp = ts;
    mr.payload_size = (uint32_t)d->record_size;
    uint8_t *p = nw_block_end(&w->meta);
    size_t h = encode_row_header(&w->meta.prev, &mr, 1, p);
    memcpy(p + h, d->record, d->record_size);
    w->meta.len += h + d->record_size;
    block_note_row(&w->meta, &mr);
    w->st.metadata++;
    return MANTRA_OK;
}

int nw_define_id(mantra_nettrace_writer *w, mantra_nettrace_event_key key, uint32_t id) {
    int rc = nw_check_usable(w);
    if (rc != MANTRA_OK)
        return rc;
    if (key == 0 || key > w->def_count || id == 0)
        return nw_fail(w, MANTRA_EINVAL, "bad key %u or metadata id %u", key, id);
    nw_event_def *d = &w->defs[key - 1];
    if (d->metadata_id)
        return d->metadata_id == id ? MANTRA_OK
                                    : nw_fail(w, MANTRA_EINVAL, "event key %u has metadata id %u already, not %u", key,
                                              d->metadata_id, id);
    return define(w, d, id, w->max_timestamp);
}

/* An event between prepare_event() and commit_event(). */
typedef struct pending_event {
    nw_row_state row;
    int sorted;
    size_t header_len;
    nw_thread *thread;
} pending_event;

static int refuse(mantra_nettrace_writer *w, int code) {
    w->st.refused++;
    return code;
}

/* Everything before the payload: checks, metadata row, stack, row header. Sets *payload_at to where
 * the payload goes; the row counts once commit_event() has run. */
static int prepare_event(mantra_nettrace_writer *w, const mantra_nettrace_event *ev, size_t size, pending_event *pe,
                         uint8_t **payload_at) {
    int rc = nw_check_usable(w);
    if (rc != MANTRA_OK)
        return rc;
    if (!ev)
        return refuse(w, nw_fail(w, MANTRA_EINVAL, "NULL event"));
    if (ev->key == 0 || ev->key > w->def_count)
        return refuse(w, nw_fail(w, MANTRA_EINVAL, "unknown event key %u", ev->key));
    if (size > MANTRA_MAX_PAYLOAD)
        return refuse(
            w, nw_fail(w, MANTRA_ERANGE, "payload of %zu bytes is over %u (TraceEvent keeps payload sizes in 16 bits)", size, MANTRA_MAX_PAYLOAD));
    if (ev->stack_frames > NW_MAX_STACK_FRAMES || (ev->stack_frames && !ev->stack))
        return refuse(w, nw_fail(w, MANTRA_EINVAL, "bad stack (%u frames, max %u)", ev->stack_frames,
                                 NW_MAX_STACK_FRAMES));
    uint64_t capture = ev->capture_thread_id ? ev->capture_thread_id : ev->thread_id;
    nw_thread *t = nw_find_thread(w, capture);
    int sorted = 1;
    /* Ordering: TraceEvent switches its current capture thread only on an IsSorted row and takes
     * IsSorted to mean no later row is older (microsoft/perfview, src/TraceEvent/EventPipe/
     * EventCache.cs, ProcessEventBlock). */
    if (w->opts.order == MANTRA_NETTRACE_GLOBAL_ORDER) {
        if (w->have_events && ev->timestamp < w->max_timestamp)
            return refuse(w, nw_fail(w, MANTRA_EORDER, "timestamp %llu is older than %llu (global order mode)",
                                     (unsigned long long)ev->timestamp, (unsigned long long)w->max_timestamp));
    } else {
        sorted = (ev->flags & MANTRA_NETTRACE_EVENT_SORTED) != 0;
        if (t && t->has_events && ev->timestamp < t->last_timestamp)
            return refuse(w, nw_fail(w, MANTRA_EORDER, "timestamp %llu is older than the thread's previous %llu",
                                     (unsigned long long)ev->timestamp, (unsigned long long)t->last_timestamp));
        if (!sorted && (!w->have_events || capture != w->prev_capture_thread))
            return refuse(w, nw_fail(w, MANTRA_EORDER, "capture thread changes on a row not marked sorted"));
    }
    /* Automatic sequence point, taken between events so that nothing of this one is pending. */
    if (w->opts.sequence_point_bytes &&
        nw_offset(w) - w->last_sp_offset >= w->opts.sequence_point_bytes &&
        (rc = nw_write_sequence_point(w)) != MANTRA_OK)
        return rc;
    /* Room for the row in the pending EventBlock: flush first when it would overflow (bounded). */
    if (w->events.rows && w->events.len + NW_ROW_HEADER_MAX + size > w->opts.block_bytes &&
        (rc = nw_flush_blocks(w)) != MANTRA_OK)
        return rc;
    if (!t && !(t = nw_add_thread(w, capture)))
        return nw_fail(w, MANTRA_ENOMEM, "out of memory for the thread table");
    /* First use of a definition: assign its metadata id and queue the metadata row (MetadataId 0,
     * IsSorted, the record as payload). */
    nw_event_def *d = &w->defs[ev->key - 1];
    if (d->metadata_id == 0 && (rc = define(w, d, w->next_metadata_id++, ev->timestamp)) != MANTRA_OK)
        return rc;
    uint32_t sid = nw_stack_id(w, ev->stack, ev->stack ? ev->stack_frames : 0);
    if (sid == 0)
        return w->failed ? w->failed : nw_fail(w, MANTRA_ENOMEM, "out of memory for stacks");
    nw_row_state *r = &pe->row;
    r->metadata_id = d->metadata_id;
    r->sequence = ev->sequence ? ev->sequence : t->last_sequence + 1u;
    r->capture_thread_id = capture;
    r->processor_number = ev->processor_number;
    r->thread_id = ev->thread_id;
    r->stack_id = sid;
    r->timestamp = ev->timestamp;
    r->activity = ev->activity_id ? *ev->activity_id : zero_guid;
    r->related = ev->related_activity_id ? *ev->related_activity_id : zero_guid;
    r->payload_size = (uint32_t)size;
    pe->sorted = sorted;
    pe->thread = t;
    uint8_t *p = nw_block_end(&w->events);
    size_t h = encode_row_header(&w->events.prev, r, sorted, p);
    *payload_at = p + h;
    pe->header_len = h;
    w->events.len += h; /* the payload is added by commit_event */
    return MANTRA_OK;
}

static void commit_event(mantra_nettrace_writer *w, const pending_event *pe) {
    w->events.len += pe->row.payload_size;
    block_note_row(&w->events, &pe->row);
    pe->thread->last_sequence = pe->row.sequence;
    pe->thread->last_timestamp = pe->row.timestamp;
    pe->thread->has_events = 1;
    w->prev_capture_thread = pe->row.capture_thread_id;
    if (!w->have_events || pe->row.timestamp > w->max_timestamp)
        w->max_timestamp = pe->row.timestamp;
    w->have_events = 1;
    w->st.events++;
}

int mantra_nettrace_write(mantra_nettrace_writer *w, const mantra_nettrace_event *ev, const void *payload,
                          size_t size) {
    if (!w)
        return MANTRA_EINVAL;
    if (size && !payload)
        return refuse(w, nw_fail(w, MANTRA_EINVAL, "NULL payload of %zu bytes", size));
    pending_event pe;
    uint8_t *at;
    int rc = prepare_event(w, ev, size, &pe, &at);
    if (rc != MANTRA_OK)
        return rc;
    if (size)
        memcpy(at, payload, size);
    commit_event(w, &pe);
    return MANTRA_OK;
}

int mantra_nettrace_write_data(mantra_nettrace_writer *w, const mantra_nettrace_event *ev, const mantra_data *data,
                               uint32_t count) {
    if (!w)
        return MANTRA_EINVAL;
    if (count && !data)
        return refuse(w, nw_fail(w, MANTRA_EINVAL, "NULL data descriptors"));
    int64_t size = mantra_payload_size(data, count);
    if (size < 0)
        return refuse(w, nw_fail(w, MANTRA_EINVAL, "a string argument is not valid UTF-8"));
    if ((uint64_t)size > MANTRA_MAX_PAYLOAD)
        return refuse(w, nw_fail(w, MANTRA_ERANGE, "payload of %lld bytes is over %u (TraceEvent keeps payload sizes in 16 bits)", (long long)size,
                                 MANTRA_MAX_PAYLOAD));
    pending_event pe;
    uint8_t *at;
    int rc = prepare_event(w, ev, (size_t)size, &pe, &at);
    if (rc != MANTRA_OK)
        return rc;
    if (size && mantra_payload_serialize(data, count, at, (size_t)size) != size) {
        /* cannot happen after a successful sizing; undo the row header */
        w->events.len -= pe.header_len;
        return refuse(w, nw_fail(w, MANTRA_EINVAL, "payload serialisation failed"));
    }
    commit_event(w, &pe);
    return MANTRA_OK;
}

/* ---- the drain's run path (nw_plain_row() in nettrace-internal.h) ------------------------------- */

int nw_plain_open(mantra_nettrace_writer *w, nw_plain *c) {
    nw_block *b = &w->events;
    if (w->failed || w->finished || !w->have_events || b->prev_ids || w->empty_stack_id == 0 ||
        (w->opts.sequence_point_bytes && nw_bytes_since_sp(w) >= w->opts.sequence_point_bytes))
        return 0;
    c->w = w;
    c->start = c->out = nw_block_end(b);
    /* the block's bytes end at block_bytes, the borrowed ones (ext <= len <= block_bytes) not here */
    c->room = b->base + NW_HEADROOM + (w->opts.block_bytes - b->ext) - NW_ROW_HEADER_MAX;
    c->t = NULL;
    c->tid = 0;
    c->fresh = 1;
    c->global = w->opts.order == MANTRA_NETTRACE_GLOBAL_ORDER;
    c->stack_id = w->empty_stack_id;
    c->rows = 0;
    c->lo_ts = c->hi_ts = 0;
    c->max_ts = w->max_timestamp;
    c->sorted_upto = UINT64_MAX;
    c->prev_capture = w->prev_capture_thread;
    c->prev = b->prev;
    return 1;
}

/* The current thread's entry learns its last row (deferred from nw_plain_row()). */
static void plain_thread_done(nw_plain *c) {
    if (c->t && !c->fresh) {
        c->t->last_sequence = c->prev.sequence;
        c->t->last_timestamp = c->prev.timestamp;
    }
}

int nw_plain_thread(nw_plain *c, uint64_t tid, uint32_t *hint) {
    mantra_nettrace_writer *w = c->w;
    if (c->t && c->tid == tid)
        return 1;
    plain_thread_done(c);
    c->t = NULL;
    nw_thread *t;
    if (*hint && *hint <= w->thread_count && w->threads[*hint - 1].capture_thread_id == tid) {
        t = &w->threads[*hint - 1];
    } else {
        t = nw_find_thread(w, tid);
        if (!t)
            return 0;
        *hint = (uint32_t)(t - w->threads) + 1u;
    }
    if (!t->has_events)
        return 0;
    c->t = t;
    c->tid = tid;
    c->fresh = 1;
    return 1;
}

int nw_plain_first_row(nw_plain *c, uint32_t mid, uint32_t seq, uint64_t ts, const uint8_t *payload, uint32_t size) {
    nw_row_state *prev = &c->prev;
    uint8_t *out = c->out, *p = out + 1;
    /* global order: not older than the newest row (the cursor's rows are in time order); runs: not
     * older than the thread's previous row, and a new capture thread only on a sorted row (the
     * writer's rules, prepare_event) */
    uint64_t floor = !c->global ? c->t->last_timestamp : c->rows ? prev->timestamp : c->max_ts;
    int sorted = ts <= c->sorted_upto;
    if (out + size > c->room || ts < floor || seq == 0 || size > MANTRA_MAX_PAYLOAD ||
        (!sorted && c->tid != (c->rows ? prev->capture_thread_id : c->prev_capture)))
        return 0;
    uint8_t flags = sorted ? 0x40 : 0;
    if (mid != prev->metadata_id) {
        flags |= 0x01;
        p += cm_varint_put(p, mid);
    }
    if (seq != prev->sequence + 1u || c->tid != prev->capture_thread_id || prev->processor_number != 0xFFFFFFFFu) {
        flags |= 0x02;
        p += cm_varint_put(p, (uint32_t)(seq - prev->sequence - 1u));
        p += cm_varint_put(p, c->tid);
        p += cm_varint_put(p, 0xFFFFFFFFu);
    }
    if (c->tid != prev->thread_id) {
        flags |= 0x04;
        p += cm_varint_put(p, c->tid);
    }
    if (c->stack_id != prev->stack_id) {
        flags |= 0x08;
        p += cm_varint_put(p, c->stack_id);
    }
    p += cm_varint_put(p, ts - prev->timestamp);
    if (size != prev->payload_size) {
        flags |= 0x80;
        p += cm_varint_put(p, size);
    }
    out[0] = flags;
    nw_plain_copy(p, payload, size);
    c->out = p + size;
    if (c->rows == 0 || ts < c->lo_ts)
        c->lo_ts = ts;
    if (c->rows++ && prev->timestamp > c->hi_ts)
        c->hi_ts = prev->timestamp; /* the previous thread's last row */
    prev->metadata_id = mid;
    prev->sequence = seq;
    prev->capture_thread_id = prev->thread_id = c->tid;
    prev->processor_number = 0xFFFFFFFFu;
    prev->stack_id = c->stack_id;
    prev->timestamp = ts;
    prev->payload_size = size;
    c->fresh = 0;
    return 1;
}

void nw_plain_close(nw_plain *c) {
    mantra_nettrace_writer *w = c->w;
    plain_thread_done(c);
    c->t = NULL;
    if (!c->rows)
        return;
    nw_block *b = &w->events;
    b->len += (size_t)(c->out - c->start);
    b->rows += c->rows;
    if (c->lo_ts < b->min_ts)
        b->min_ts = c->lo_ts;
    /* each thread's rows are in time order: the newest is the last of one of them */
    uint64_t hi = c->prev.timestamp > c->hi_ts ? c->prev.timestamp : c->hi_ts;
    if (hi > b->max_ts)
        b->max_ts = hi;
    b->prev = c->prev;
    w->prev_capture_thread = c->prev.capture_thread_id;
    if (hi > w->max_timestamp)
        w->max_timestamp = hi;
    w->st.events += c->rows;
    c->start = c->out;
    c->rows = 0;
    c->hi_ts = 0;
    c->max_ts = w->max_timestamp;
    c->prev_capture = w->prev_capture_thread;
}

int nw_plain_one(mantra_nettrace_writer *w, uint32_t mid, uint64_t tid, uint32_t *hint, uint32_t seq, uint64_t ts,
                 uint64_t sorted_upto, const uint8_t *payload, uint32_t size) {
    nw_plain c;
    if (mid == 0 || !nw_plain_open(w, &c))
        return 0;
    if (!c.global)
        c.sorted_upto = sorted_upto; /* global order: every row IsSorted, as opened */
    int done = nw_plain_thread(&c, tid, hint) && nw_plain_row(&c, mid, seq, ts, payload, size);
    nw_plain_close(&c);
    return done;
}

/* ---- a session writer's chunk of rows ------------------------------------------------------------ */

/* Records that n bytes at p go where the EventBlock's own bytes reach at; 0 when there is no room to
 * record it (the caller copies them). */
static int borrow(mantra_nettrace_writer *w, const uint8_t *at, const uint8_t *p, size_t n) {
    if (w->nborrows == w->borrow_cap) {
        size_t cap = w->borrow_cap ? 2 * w->borrow_cap : 64;
        nw_borrow *a = realloc(w->borrows, cap * sizeof *a);
        if (!a)
            return 0;
        w->borrows = a;
        w->borrow_cap = cap;
    }
    w->borrows[w->nborrows++] = (nw_borrow){at, p, n};
    w->borrows_taken++;
    return 1;
}

int nw_write_rows(mantra_nettrace_writer *w, mantra_nettrace_event_key key, uint64_t tid, uint32_t *hint,
                  const nw_rows *r, uint64_t sorted_upto) {
    int rc = nw_check_usable(w);
    if (rc != MANTRA_OK)
        return rc;
    nw_block *b = &w->events;
    if (NW_ROW_HEADER_MAX + (size_t)r->size + r->rest_len > w->opts.block_bytes)
        return nw_fail(w, MANTRA_ERANGE, "a chunk of %zu bytes does not fit a block", r->rest_len);
    /* the whole chunk in one block: its rows are compressed against its first row */
    if (b->rows && b->len + NW_ROW_HEADER_MAX + r->size + r->rest_len > w->opts.block_bytes &&
        (rc = nw_flush_blocks(w)) != MANTRA_OK)
        return rc;
    uint32_t mid = nw_key_metadata_id(w, key);
    if (!nw_plain_one(w, mid, tid, hint, r->seq, r->ts, sorted_upto, r->payload, r->size)) {
        mantra_nettrace_event ev = {.key = key,
                                    .flags = r->ts <= sorted_upto ? MANTRA_NETTRACE_EVENT_SORTED : 0u,
                                    .timestamp = r->ts,
                                    .thread_id = tid,
                                    .processor_number = 0xFFFFFFFFu,
                                    .sequence = r->seq};
        if ((rc = mantra_nettrace_write(w, &ev, r->payload, r->size)) != MANTRA_OK)
            return rc;
    }
    if (r->rest_rows == 0)
        return MANTRA_OK;
    /* the block's previous row is the first row now, as the rest's compression assumes; the rows
     * need no room check: the block had room for all of them before the first was written, and a
     * first row that flushed the blocks (a new definition's MetadataBlock full) left an empty one */
    nw_thread *t = nw_find_thread(w, tid); /* the first row's: the writer's last thread */
    if (!t || b->prev.metadata_id != mid || b->prev.sequence != r->seq || b->prev.timestamp != r->ts ||
        b->prev.payload_size != r->size || b->prev.capture_thread_id != tid)
        return nw_fail(w, MANTRA_ESTATE, "a chunk's first row did not become the block's previous row");
    if (r->rest_len < w->borrow_min || !borrow(w, nw_block_end(b), r->rest, r->rest_len))
        memcpy(nw_block_end(b), r->rest, r->rest_len);
    else
        b->ext += r->rest_len;
    b->len += r->rest_len;
    b->rows += r->rest_rows;
    if (r->last_ts > b->max_ts)
        b->max_ts = r->last_ts;
    b->prev.metadata_id = r->last_mid;
    b->prev.sequence = r->last_seq;
    b->prev.timestamp = r->last_ts;
    b->prev.payload_size = r->last_size;
    t->last_sequence = r->last_seq;
    t->last_timestamp = r->last_ts;
    if (r->last_ts > w->max_timestamp)
        w->max_timestamp = r->last_ts;
    w->st.events += r->rest_rows;
    return MANTRA_OK;
}
