/* Event rows, the reader's per-event path: compressed and uncompressed row headers of EventBlocks
 * and (V4/V5) MetadataBlocks, the event handed out with its metadata, thread, labels and stack, and
 * mantra_reader_next, which steps the stream until an event is ready. The functions that run per
 * event stay together in this file so that they inline. */
#include <stdlib.h>
#include <string.h>

#include "mantra/decode.h"
#include "common/le-internal.h"
#include "common/varint-internal.h"
#include "field_plan-internal.h"
#include "reader-internal.h"

/* The row header fields a compressed row may leave out, back to 0 for the first row of a block.
 * They live in the event handed out (r->cur) rather than in a copy, so that a row is not copied
 * field by field into it: read_row updates them, next_row completes the event. */
static void reset_row_state(mantra_trace_event *e) {
    e->metadata_id = 0;
    e->sequence = 0;
    e->capture_thread_index = 0;
    e->processor = 0;
    e->thread_index = 0;
    e->stack_id = 0;
    e->timestamp = 0;
    memset(&e->activity_id, 0, sizeof e->activity_id);
    memset(&e->related_activity_id, 0, sizeof e->related_activity_id);
    e->label_list_id = 0;
    e->payload_size = 0;
}

int rd_start_rows(mantra_reader *r, int kind, const uint8_t *p, size_t n, uint64_t off) {
    if (n < 20)
        return rd_fail(r, MANTRA_EFORMAT, off, "%s of %zu bytes (a 20-byte header expected)",
                       kind == RD_BLK_EVENT ? "EventBlock" : "MetadataBlock", n);
    uint16_t hs = mantra_load_u16(p);
    if (hs < 20 || hs > n)
        return rd_fail(r, MANTRA_EFORMAT, off, "block header size %u (20..%zu expected)", hs, n);
    r->compressed = mantra_load_u16(p + 2) & 1;
    r->blk_kind = kind;
    r->blk = p;
    r->blk_len = n;
    r->blk_pos = hs;
    r->blk_off = off;
    reset_row_state(&r->cur);
    r->first_row = 1;
    r->state = RD_ST_ROWS;
    return 0;
}

/* A varint of a row header into dst; a one-byte value (most of them) without the loop. */
#define ROW_VAR(dst, max, what)                                                                    \
    do {                                                                                           \
        if (pos < n && p[pos] < 0x80) {                                                            \
            (dst) = p[pos++];                                                                      \
            break;                                                                                 \
        }                                                                                          \
        uint64_t v_;                                                                               \
        size_t k_ = cm_varint_get(p + pos, n - pos, (max), &v_);                                   \
        if (k_ == 0)                                                                               \
            return rd_fail(r, MANTRA_EFORMAT, r->blk_off + pos, "bad %s varint in a row", (what)); \
        pos += k_;                                                                                 \
        (dst) = v_;                                                                                \
    } while (0)

/* Decodes the next row of the current block into the row state in r->cur (reset_row_state); returns 1 and sets *payload_pos. */
static int read_row(mantra_reader *r, size_t *payload_pos, int *sorted) {
    const uint8_t *p = r->blk;
    size_t n = r->blk_len, pos = r->blk_pos;
    mantra_trace_event *s = &r->cur;
    if (r->compressed) {
        uint8_t f = p[pos++];
        uint64_t v;
        if (f & 0x01) {
            ROW_VAR(v, CM_VARINT32_MAX_BYTES, "metadata id");
            s->metadata_id = (uint32_t)v;
        }
        if (f & 0x02) {
            ROW_VAR(v, CM_VARINT32_MAX_BYTES, "sequence delta");
            s->sequence = s->sequence + (uint32_t)v + 1u;
            ROW_VAR(v, CM_VARINT64_MAX_BYTES, "capture thread");
            s->capture_thread_index = v;
            ROW_VAR(v, CM_VARINT32_MAX_BYTES, "processor number");
            s->processor = (uint32_t)v;
        } else if (s->metadata_id != 0) {
            s->sequence++;
        }
        if (f & 0x04) {
            ROW_VAR(v, CM_VARINT64_MAX_BYTES, "thread");
            s->thread_index = v;
        }
        if (f & 0x08) {
            ROW_VAR(v, CM_VARINT32_MAX_BYTES, "stack id");
            s->stack_id = (uint32_t)v;
        }
        ROW_VAR(v, CM_VARINT64_MAX_BYTES, "timestamp delta");
        s->timestamp = (int64_t)((uint64_t)s->timestamp + v);
        if (!r->v6) {
            if (f & 0x10) {
                if (n - pos < 16)
                    return rd_fail(r, MANTRA_EFORMAT, r->blk_off + pos, "activity id cut by the end of the block");
                cm_load_guid(&s->activity_id, p + pos);
                pos += 16;
            }
            if (f & 0x20) {
                if (n - pos < 16)
                    return rd_fail(r, MANTRA_EFORMAT, r->blk_off + pos,
                                   "related activity id cut by the end of the block");
                cm_load_guid(&s->related_activity_id, p + pos);
                pos += 16;
            }
        } else if (f & 0x10) {
            ROW_VAR(v, CM_VARINT32_MAX_BYTES, "label list id");
            s->label_list_id = (uint32_t)v;
        }
        *sorted = (f & 0x40) != 0;
        if (f & 0x80) {
            ROW_VAR(v, CM_VARINT32_MAX_BYTES, "payload size");
            s->payload_size = (uint32_t)v;
        }
        if (s->payload_size > n - pos)
            return rd_fail(r, MANTRA_EFORMAT, r->blk_off + r->blk_pos,
                           "row payload of %zu bytes exceeds the block (%zu bytes left)", s->payload_size, n - pos);
        *payload_pos = pos;
        r->blk_pos = pos + s->payload_size;
        return 1;
    }
    /* uncompressed */
    size_t hdr = r->v6 ? 48 : 76;
    if (n - pos < 4 + hdr)
        return rd_fail(r, MANTRA_EFORMAT, r->blk_off + pos, "uncompressed row header cut by the end of the block");
    uint32_t esize = mantra_load_u32(p + pos);
    const uint8_t *h = p + pos + 4;
    uint32_t id = mantra_load_u32(h);
    s->metadata_id = id & 0x7FFFFFFFu;
    /* bit 31 means NOT sorted: dotnet/runtime, src/native/eventpipe/ep-block.c writes it so and microsoft/perfview,
     * src/TraceEvent/EventPipe/EventPipeEventSource.cs reads it so (the format documents say the opposite) */
    *sorted = (id & 0x80000000u) == 0;
    s->sequence = mantra_load_u32(h + 4);
    s->thread_index = mantra_load_u64(h + 8);
    s->capture_thread_index = mantra_load_u64(h + 16);
    s->processor = mantra_load_u32(h + 24);
    s->stack_id = mantra_load_u32(h + 28);
    s->timestamp = (int64_t)mantra_load_u64(h + 32);
    if (!r->v6) {
        cm_load_guid(&s->activity_id, h + 40);
        cm_load_guid(&s->related_activity_id, h + 56);
        s->payload_size = mantra_load_u32(h + 72);
    } else {
        s->label_list_id = mantra_load_u32(h + 40);
        s->payload_size = mantra_load_u32(h + 44);
    }
    if (esize < hdr || esize > n - pos - 4 || s->payload_size > esize - hdr)
        return rd_fail(r, MANTRA_EFORMAT, r->blk_off + pos,
                       "uncompressed row size %u does not fit its header, payload (%zu bytes) and block", esize,
                       s->payload_size);
    *payload_pos = pos + 4 + hdr;
    r->blk_pos = pos + 4 + esize;
    return 1;
}

/* Metadata by id: the dense lookup, filled from r->meta on first use of an id. */
static const mantra_trace_metadata *meta_slow(mantra_reader *r, uint32_t id) {
    uint64_t *mv = cm_map_get(&r->meta, id);
    if (mv == NULL)
        return NULL;
    const mantra_trace_metadata *m = (const mantra_trace_metadata *)(uintptr_t)*mv;
    size_t old = r->meta_dense_cap;
    if (id < RD_DENSE_MAX &&
        (id < old || rd_grow((void **)&r->meta_dense, &r->meta_dense_cap, (size_t)id + 1, sizeof *r->meta_dense) == 0)) {
        if (r->meta_dense_cap > old)
            memset(r->meta_dense + old, 0, (r->meta_dense_cap - old) * sizeof *r->meta_dense);
        r->meta_dense[id] = m;
    }
    return m;
}

static inline const mantra_trace_metadata *meta_of(mantra_reader *r, uint32_t id) {
    if (id < r->meta_dense_cap && r->meta_dense[id] != NULL)
        return r->meta_dense[id];
    return meta_slow(r, id);
}

/* V6 thread index -> OS thread id, remembering the last one of the thread (which = 0) and of the
 * capture thread (which = 1). 0 when no Thread block defines the index. */
static inline int thread_of(mantra_reader *r, int which, uint64_t index, uint64_t *out) {
    if (!r->th_valid[which] || r->th_key[which] != index) {
        uint64_t *t = cm_map_get(&r->threads, index);
        if (t == NULL)
            return 0;
        r->th_key[which] = index;
        r->th_val[which] = *t;
        r->th_valid[which] = 1;
    }
    *out = r->th_val[which];
    return 1;
}

int rd_define_metadata(mantra_reader *r, mantra_trace_metadata *m, uint64_t off) {
    if (rd_add_metadata(r, m, off) < 0)
        return r->err_code;
    rd_forget_meta(r, m->id); /* V4/V5 may define an id again */
    if (!m->fields_from_manifest && m->field_count != 0) {
        m->plan = rd_plan_build(&r->arena, m->fields, m->field_count, &r->plans);
        if (m->plan == NULL)
            return rd_fail(r, MANTRA_ENOMEM, off, "out of memory");
    }
    return 0;
}

void rd_dense_free(mantra_reader *r) {
    free(r->meta_dense);
    free(r->stack_dense);
}

/* Processes one row of the current block: 1 = an event is in r->cur, 0 = no event. */
static int next_row(mantra_reader *r) {
    uint64_t row_off = r->blk_off + r->blk_pos;
    size_t ppos = 0;
    int sorted = 0;
    int rc = read_row(r, &ppos, &sorted);
    if (rc < 0)
        return rc;
    mantra_trace_event *e = &r->cur; /* read_row updated its row header fields */
    const uint8_t *payload = r->blk + ppos;
    if (r->blk_kind == RD_BLK_METADATA) {
        mantra_trace_metadata *m;
        const char *what = NULL;
        rc = rd_parse_metadata_v5(&r->arena, payload, e->payload_size, &m, &what);
        if (rc < 0)
            return rd_fail(r, rc, r->blk_off + ppos, "bad metadata record: %s", what ? what : "?");
        return rd_define_metadata(r, m, r->blk_off + ppos);
    }
    /* dropped-event accounting and the current capture thread, as TraceEvent (microsoft/perfview,
     * src/TraceEvent/EventPipe/EventCache.cs, ProcessEventBlock: the capture thread changes only on
     * the first row of a block or an IsSorted row) */
    uint64_t key = e->capture_thread_index;
    if (r->first_row || sorted || !r->have_cur_thread) {
        r->cur_thread = key;
        r->have_cur_thread = 1;
        r->first_row = 0;
    }
    uint64_t *last = r->seq_last;
    if (!r->seq_valid || r->seq_key != r->cur_thread) {
        last = rd_thread_seq(r, r->cur_thread, e->sequence - 1u);
        if (last == NULL)
            return rd_fail(r, MANTRA_ENOMEM, row_off, "out of memory");
        r->seq_last = last;
        r->seq_key = r->cur_thread;
        r->seq_valid = 1;
    }
    rd_note_seq(r, last, e->sequence - 1u);
    *last = e->sequence;

    const mantra_trace_metadata *m = meta_of(r, e->metadata_id);
    if (m == NULL)
        return rd_fail(r, MANTRA_EFORMAT, row_off, "event refers to metadata id %u, which no earlier metadata defines",
                       e->metadata_id);
    /* every other member is set below (no memset of the whole event per row) */
    e->stack = NULL;
    e->stack_count = 0;
    e->metadata = m;
    e->is_sorted = sorted;
    e->version = m->version;
    e->level = m->level;
    e->opcode = m->opcode;
    e->keywords = m->keywords;
    e->payload = payload;
    e->pointer_size = r->info.pointer_size;
    e->offset = row_off;
    e->decode_status = rd_event_decode_status(e);
    if (!r->v6) {
        e->thread_id = e->thread_index;
        e->capture_thread_id = e->capture_thread_index;
    } else {
        memset(&e->activity_id, 0, sizeof e->activity_id);
        memset(&e->related_activity_id, 0, sizeof e->related_activity_id);
        int have_t = thread_of(r, 0, e->thread_index, &e->thread_id);
        if (!have_t || !thread_of(r, 1, e->capture_thread_index, &e->capture_thread_id))
            return rd_fail(r, MANTRA_EFORMAT, row_off, "event refers to thread index %llu, which no Thread block defines",
                           (unsigned long long)(!have_t ? e->thread_index : e->capture_thread_index));
        if (e->label_list_id != 0) {
            uint64_t *li = cm_map_get(&r->labels, e->label_list_id);
            if (li == NULL)
                return rd_fail(r, MANTRA_EFORMAT, row_off, "event refers to label list %u, which no LabelList block defines",
                               e->label_list_id);
            const rd_label_list *l = &r->label_lists[*li];
            if (l->has_activity)
                e->activity_id = l->activity;
            if (l->has_related)
                e->related_activity_id = l->related;
            if (l->has_opcode)
                e->opcode = l->opcode;
            if (l->has_level)
                e->level = l->level;
            if (l->has_version)
                e->version = l->version;
            if (l->has_keywords)
                e->keywords = l->keywords;
        }
    }
    int64_t si = rd_stack_get(r, e->stack_id);
    if (si >= 0) {
        const rd_stack_ref *sr = &r->stack_refs[si];
        e->stack = r->stack_data + sr->off;
        e->stack_count = sr->count;
    }
    if (r->order) {
        if (rd_order_event(r->order, e, r->cur_thread) < 0)
            return rd_fail(r, MANTRA_ENOMEM, row_off, "out of memory");
        return 0;
    }
    return 1;
}

uint64_t mantra_trace_event_ip(const mantra_trace_event *ev, size_t i) {
    if (ev == NULL || i >= ev->stack_count)
        return 0;
    if (ev->pointer_size == 4)
        return mantra_load_u32(ev->stack + 4 * i);
    return mantra_load_u64(ev->stack + 8 * i);
}

/* One step: 1 = event in r->cur, 0 = progress without event, < 0 error. */
static int step(mantra_reader *r) {
    if (r->state == RD_ST_ROWS) {
        if (r->blk_pos < r->blk_len)
            return next_row(r);
        r->state = RD_ST_OBJECTS;
        return 0;
    }
    return r->v6 ? rd_next_block_v6(r) : rd_next_object_v4(r);
}

static inline void count_event(mantra_reader *r, const mantra_trace_event *e) {
    r->stats.events++;
    r->stats.decode_errors += e->decode_status != 0;
    r->stats.manifest_events += e->metadata->fields_from_manifest != 0;
}

/* mantra_reader_next past the common case: sorted delivery, block and object boundaries, the end
 * and errors (kept out of line, so that the common case saves no registers). */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static int next_slow(mantra_reader *r, const mantra_trace_event **ev) {
    for (;;) {
        if (r->order) {
            const mantra_trace_event *e = rd_order_pop(r->order);
            if (e) {
                count_event(r, e);
                *ev = e;
                return 1;
            }
        }
        if (r->state == RD_ST_END)
            return 0;
        if (r->state == RD_ST_ERROR)
            return r->err_code;
        int rc = step(r);
        if (rc < 0) {
            /* events queued from complete blocks are still delivered before the error */
            if (r->order)
                rd_order_flush(r->order);
            continue;
        }
        if (rc == 1) {
            count_event(r, &r->cur);
            *ev = &r->cur;
            return 1;
        }
    }
}

int mantra_reader_next(mantra_reader *r, const mantra_trace_event **ev) {
    if (r == NULL || ev == NULL)
        return MANTRA_EINVAL;
    *ev = NULL;
    if (!r->opened)
        return MANTRA_EINVAL;
    /* the common case first: the next row of the current block, unsorted */
    if (r->order == NULL && r->state == RD_ST_ROWS && r->blk_pos < r->blk_len) {
        int rc = next_row(r);
        if (rc == 1) {
            count_event(r, &r->cur);
            *ev = &r->cur;
            return 1;
        }
    }
    return next_slow(r, ev);
}
