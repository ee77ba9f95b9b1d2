/* Private parts of the nettrace reader (runtime/src/reader/): the reader object, shared by the files
 * that read its input (input.c), the V4/V5 and V6 streams (stream_v4.c, stream_v6.c), the blocks
 * (stack_block.c, sequence_point.c, blocks_v6.c), the metadata table (metadata_table.c), the event
 * rows (event_rows.c) and the public entry points (reader.c); and the helpers of metadata parsing
 * (metadata_parse.c), manifest-described events (manifest_fields.c) and sorted delivery (order.c). */
#ifndef MANTRA_READER_INTERNAL_H
#define MANTRA_READER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/arena-internal.h"
#include "common/grow-internal.h"
#include "common/hashmap-internal.h"
#include "field_plan-internal.h"
#include "mantra/decode.h"
#include "mantra/reader.h"

/* ---- the reader object ---- */

#define RD_DEFAULT_MAX_BLOCK (64u << 20)
#define RD_READ_CHUNK (1u << 20)
/* The FastSerialization signature after "Nettrace" (V4/V5) or at offset 0 (NetPerf, V3). */
#define RD_FS_SIGNATURE "!FastSerialization.1"

enum { RD_IN_NONE, RD_IN_FD, RD_IN_MEM, RD_IN_MAP }; /* RD_IN_MAP: a regular file, mapped (input.c) */
enum { RD_ST_OBJECTS, RD_ST_ROWS, RD_ST_END, RD_ST_ERROR };
enum { RD_BLK_EVENT, RD_BLK_METADATA };

typedef struct rd_stack_ref {
    size_t off;
    size_t count; /* addresses */
} rd_stack_ref;

typedef struct rd_label_list {
    mantra_guid activity, related;
    uint8_t has_activity, has_related, has_opcode, has_level, has_version, has_keywords;
    uint8_t opcode, level, version;
    uint64_t keywords;
} rd_label_list;

typedef struct rd_order rd_order;

struct mantra_reader {
    mantra_reader_options opt;
    /* input */
    int in_kind;
    int fd;
    int own_fd;
    uint8_t *buf;
    rd_plan_head *plans; /* every decoding plan, for rd_plan_forget_notes when buf moves (rd_in_ensure) */
    size_t cap, pos, end;
    uint64_t base; /* stream offset of buf[0] */
    int eof;
    int map_tried;       /* input.c: mapping the file was tried */
    size_t map_released; /* input.c: mapped bytes before this were handed back to the host */
    size_t map_ready;    /* input.c: mapped bytes before this were made resident */
    /* state */
    int opened;
    int state;
    int err_code;
    uint64_t err_off;
    char err[512];
    int complete;
    int v6;
    mantra_trace_info info;
    mantra_reader_stats stats;
    /* providers registered for minimal metadata */
    const mantra_provider_desc **providers;
    size_t nproviders;
    /* manifests loaded at run time, and the field descriptions made for their events */
    const struct mantra_manifest **manifests;
    size_t nmanifests;
    /* manifests that complete the registered providers' partial descriptions */
    const struct mantra_manifest **provider_manifests;
    size_t nprovider_manifests;
    cm_map manifest_fields; /* manifest event -> rd_mfields* */
    /* metadata: id -> mantra_trace_metadata* (kept until free) */
    cm_arena arena;
    cm_map meta;
    /* stacks of the current sequence-point region */
    cm_map stacks; /* id -> index in stack_refs */
    rd_stack_ref *stack_refs;
    size_t nstack, capstack;
    uint8_t *stack_data;
    size_t stack_len, stack_cap;
    /* per-capture-thread sequence numbers (dropped-event accounting) */
    cm_map seq;
    uint64_t cur_thread;
    int have_cur_thread;
    /* V6 */
    cm_map threads; /* index -> OS thread id */
    cm_map labels;  /* id -> index in label_lists */
    rd_label_list *label_lists;
    size_t nlabels, caplabels;
    /* current block */
    int blk_kind;
    const uint8_t *blk;
    size_t blk_len, blk_pos;
    uint64_t blk_off; /* stream offset of blk[0] */
    int compressed;
    int first_row;
    /* the event handed out; its row header fields are also the state that compressed rows update
     * (event_rows.c, reset_row_state) */
    mantra_trace_event cur;
    rd_order *order;
    /* Per-event lookups without hashing (event_rows.c, stack_block.c): the maps above stay the
     * record; these are filled from them and forgotten whenever a map changes. */
    const mantra_trace_metadata **meta_dense; /* by metadata id (ids below RD_DENSE_MAX) */
    size_t meta_dense_cap;
    uint64_t *seq_last; /* r->seq's value for seq_key, while seq_valid */
    uint64_t seq_key;
    int seq_valid;
    uint64_t th_key[2], th_val[2]; /* V6 thread index -> OS id: [0] thread, [1] capture thread */
    int th_valid[2];
    uint32_t *stack_dense; /* index in stack_refs + 1 by stack id - stack_base; 0 = none */
    size_t stack_dense_n, stack_dense_cap;
    uint32_t stack_base;
};

/* Ids up to which the dense lookups hold metadata and stacks (the runtime numbers both from 1). */
#define RD_DENSE_MAX (1u << 20)

/* The lookups above forget what they hold (the maps they come from changed). */
static inline void rd_forget_meta(mantra_reader *r, uint32_t id) {
    if (id < r->meta_dense_cap)
        r->meta_dense[id] = NULL;
}
static inline void rd_forget_all_meta(mantra_reader *r) {
    if (r->meta_dense_cap)
        memset(r->meta_dense, 0, r->meta_dense_cap * sizeof *r->meta_dense);
}
static inline void rd_forget_threads(mantra_reader *r) { r->th_valid[0] = r->th_valid[1] = 0; }
/* Records stack id -> index in stack_refs (stack_block.c). 0 or MANTRA_ENOMEM. */
int rd_stack_put(mantra_reader *r, uint32_t id, size_t index);
/* Forgets every stack of the region (sequence_point.c). */
void rd_stacks_clear(mantra_reader *r);
/* The index in stack_refs of stack id, or -1. */
static inline int64_t rd_stack_get(const mantra_reader *r, uint32_t id) {
    uint32_t k = id - r->stack_base;
    if (id >= r->stack_base && k < r->stack_dense_n)
        return (int64_t)r->stack_dense[k] - 1;
    uint64_t *v = cm_map_get(&r->stacks, id);
    return v ? (int64_t)*v : -1;
}
/* Frees the lookups (mantra_reader_free). */
void rd_dense_free(mantra_reader *r);

/* Records an error ("offset N: " + the formatted text), puts the reader in its error state and
 * returns code (reader.c). */
int rd_fail(mantra_reader *r, int code, uint64_t off, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* The end of the stream was reached: the trace is complete; queued sorted events are released. */
int rd_end_of_stream(mantra_reader *r);
/* The input ended between two blocks, before the end-of-stream marker. */
int rd_truncated_at_boundary(mantra_reader *r);

/* Grows *p (an array of *cap elements of elem bytes) to hold need elements. 0 or MANTRA_ENOMEM. */
static inline int rd_grow(void **p, size_t *cap, size_t need, size_t elem) {
    return cm_grow(p, cap, need, elem, 64);
}

/* ---- input (input.c) ---- */

/* Stream offset of the next unread byte. */
static inline uint64_t rd_in_offset(const mantra_reader *r) { return r->base + r->pos; }
/* Bytes buffered and not yet consumed. */
static inline size_t rd_in_avail(const mantra_reader *r) { return r->end - r->pos; }
/* Makes n bytes available at buf + pos: 1 when they are, 0 when the input ends first, < 0 on error. */
int rd_in_ensure(mantra_reader *r, size_t n);
/* Releases the input (the buffer of a descriptor input, and the descriptor when the reader opened it). */
void rd_in_close(mantra_reader *r);

/* ---- streams (stream_v4.c, stream_v6.c) ---- */

/* Each reads the Trace object or block after the version header and fills r->info. */
int rd_open_v4(mantra_reader *r);
int rd_open_v6(mantra_reader *r);
/* Each reads and processes the next object or block. */
int rd_next_object_v4(mantra_reader *r);
int rd_next_block_v6(mantra_reader *r);

/* ---- blocks (stack_block.c, sequence_point.c, blocks_v6.c) ---- */

/* Each parses the content p[0..n) of one block found at stream offset off. */
int rd_parse_stack_block(mantra_reader *r, const uint8_t *p, size_t n, uint64_t off);
int rd_parse_sp_block(mantra_reader *r, const uint8_t *p, size_t n, uint64_t off);
int rd_parse_metadata_block_v6(mantra_reader *r, const uint8_t *p, size_t n, uint64_t off);
int rd_parse_thread_block(mantra_reader *r, const uint8_t *p, size_t n, uint64_t off);
int rd_parse_remove_thread_block(mantra_reader *r, const uint8_t *p, size_t n, uint64_t off);
int rd_parse_label_block(mantra_reader *r, const uint8_t *p, size_t n, uint64_t off);

/* TraceEvent's dropped-event rule (microsoft/perfview, src/TraceEvent/EventPipe/EventCache.cs, the
 * per-capture-thread sequence number checks): a gap between the last sequence number seen for a
 * thread and the expected one counts as lost events; V4/V5 skip the check while the last is 0. */
static inline void rd_note_seq(mantra_reader *r, uint64_t *last, uint32_t expected) {
    if (r->v6 || *last != 0) {
        int32_t d = (int32_t)(expected - (uint32_t)*last);
        if (d > 0)
            r->stats.dropped += (uint64_t)d;
    }
}

/* The last sequence number of a capture thread (created as init when first seen); NULL when out of
 * memory. */
static inline uint64_t *rd_thread_seq(mantra_reader *r, uint64_t key, uint32_t init) {
    uint64_t *v = cm_map_get(&r->seq, key);
    if (v)
        return v;
    r->seq_valid = 0; /* the insertion may move every value */
    if (cm_map_put(&r->seq, key, init) < 0)
        return NULL;
    return cm_map_get(&r->seq, key);
}

/* ---- metadata table (metadata_table.c) ---- */

/* Adds a parsed metadata record under its id, with the fields of a loaded manifest or a registered
 * provider applied where the trace gives none. 0 or an error (recorded). */
int rd_add_metadata(mantra_reader *r, mantra_trace_metadata *m, uint64_t off);

/* ---- event rows (event_rows.c) ---- */

/* rd_add_metadata for a record read from the trace, then the lookups told and the record's
 * decoding plan built (field_plan.c). 0 or an error (recorded). */
int rd_define_metadata(mantra_reader *r, mantra_trace_metadata *m, uint64_t off);

/* Starts the rows of an EventBlock or (V4/V5) MetadataBlock: kind is RD_BLK_EVENT or RD_BLK_METADATA. */
int rd_start_rows(mantra_reader *r, int kind, const uint8_t *p, size_t n, uint64_t off);

/* ---- metadata parsing (metadata_parse.c) ---- */

/* Parses a V4/V5 metadata payload (from MetadataId on) into a metadata record allocated in a.
 * Returns 0 or MANTRA_EFORMAT/MANTRA_ENOMEM; *what names the problem. */
int rd_parse_metadata_v5(cm_arena *a, const uint8_t *p, size_t n, mantra_trace_metadata **out, const char **what);
/* Parses the part of a V5 blob from EventId on (generated registry blobs) into fields. */
int rd_parse_metadata_v5_blob(cm_arena *a, const uint8_t *p, size_t n, mantra_trace_metadata *m, const char **what);
/* Parses one V6 metadata row (after its RowSize). */
int rd_parse_metadata_v6(cm_arena *a, const uint8_t *p, size_t n, mantra_trace_metadata **out, const char **what);
/* V6 strings: varuint32 length + UTF-8. Copies into the arena. Returns bytes used or 0. */
size_t rd_v6_string(cm_arena *a, const uint8_t *p, size_t n, const char **out);

/* ---- field decoding (field_decode.c) ---- */

/* Payload bytes of fields[0..count) when every one has a fixed size (that fits 32 bits), else 0. */
uint32_t rd_fields_fixed_size(const mantra_field_desc *fields, uint32_t count);
/* How e's payload matches fields that are not all of a fixed size (a MANTRA_DECODE_* status). */
int rd_event_check_fields(const mantra_trace_event *e);
/* An event's decode_status (mantra_trace_event): how its payload matches the fields that
 * describe it (the trace's metadata, a manifest or a registered provider); 0 when none do. A
 * fixed-size description costs one comparison. */
static inline int rd_event_decode_status(const mantra_trace_event *e) {
    const mantra_trace_metadata *m = e->metadata;
    if (m->fixed_payload_size != 0)
        return e->payload_size == m->fixed_payload_size ? MANTRA_DECODE_OK
               : e->payload_size > m->fixed_payload_size ? MANTRA_DECODE_TRAILING
                                                         : MANTRA_DECODE_SHORT;
    if (m->field_count == 0 && !m->fields_from_manifest)
        return MANTRA_DECODE_OK;
    if (m->plan != NULL && !m->fields_from_manifest) { /* the usual case, one call */
        int rc = rd_plan_check_note(m->plan, e->payload, e->payload_size);
        return rc == 0 ? MANTRA_DECODE_OK : rc == 1 ? MANTRA_DECODE_TRAILING : MANTRA_DECODE_SHORT;
    }
    return rd_event_check_fields(e);
}

/* ---- manifests loaded at run time (manifest_fields.c) ---- */
struct mantra_manifest_event;
/* The descriptions shown for a manifest event's template (allocated in a). 0 or MANTRA_ENOMEM. */
int rd_manifest_fields(cm_arena *a, const struct mantra_manifest_event *e, uint32_t pointer_size,
                       const mantra_field_desc **fields, uint32_t *count);
/* mantra_decode_event() for metadata with fields_from_manifest. */
int rd_manifest_decode(const mantra_trace_event *ev, const mantra_field_visitor *visitor, void *ctx);
/* How the payload matches the manifest template: a MANTRA_DECODE_* status (mantra/decode.h). */
int rd_manifest_check(const mantra_trace_event *ev);

/* ---- length plans of manifest templates (manifest_check.c) ---- */
typedef struct mantra_manifest_plan rd_manifest_plan;
/* The plan of e's template for a trace of pointer_size (allocated in a), NULL when out of memory. */
const rd_manifest_plan *rd_manifest_plan_build(cm_arena *a, const struct mantra_manifest_event *e,
                                               uint32_t pointer_size);
/* mantra_manifest_decode(template, payload, size, pointer_size, NULL, NULL, NULL) through the plan:
 * MANTRA_DECODE_OK, _TRAILING, _SHORT or _BAD_STRING, the same result. */
int rd_manifest_plan_check(const rd_manifest_plan *p, const uint8_t *payload, size_t size);

/* ---- sorted delivery (order.c) ---- */
rd_order *rd_order_new(void);
void rd_order_free(rd_order *o);
/* Offers one event of an EventBlock (copying it): `queue_key` is the current capture thread key. */
int rd_order_event(rd_order *o, const mantra_trace_event *ev, uint64_t queue_key);
/* Dispatches every queued event (sequence point, end of stream). */
int rd_order_flush(rd_order *o);
/* Pops the next ready event (valid until the next pop or free); NULL when none. */
const mantra_trace_event *rd_order_pop(rd_order *o);
/* Event slots the queue has allocated so far (tests: not one per event). */
uint64_t rd_order_allocations(const rd_order *o);

#endif
