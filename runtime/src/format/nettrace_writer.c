/* nettrace V5 writer (mantra/nettrace_writer.h). Section numbers refer to
 * ../shared/reference/nettrace-format.md. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/utf-internal.h"
#include "common/varint-internal.h"
#include "mantra/nettrace_writer.h"
#include "platform/platform-internal.h"

/* Room in front of a block's content for the object framing, BlockSize and padding (§2.3, §2.5):
 * 3 tags + 3 int32 + name (<= 13) + EndObject + int32 BlockSize + 3 padding = 36 bytes. */
#define HEADROOM 64
/* EventBlock / MetadataBlock content header (§3.1). */
#define BLOCK_HEADER_SIZE 20
/* Largest compressed row header (§3.2): flags 1, MetadataId 5, SeqDelta 5, CaptureThreadId 10,
 * ProcNumber 5, ThreadId 10, StackId 5, TimestampDelta 10, 2 GUIDs 32, PayloadSize 5. */
#define ROW_HEADER_MAX 88
/* Deepest stack accepted (TE carries stack bytes in a 16-bit size, §4). */
#define MAX_STACK_FRAMES 4096
#define DEFAULT_BLOCK_BYTES (100u * 1024u)
#define MIN_BLOCK_BYTES 1024u

/* Compression state: the previous row's header fields (§3.2), reset per block. */
typedef struct row_state {
    uint32_t metadata_id;
    uint32_t sequence;
    uint64_t capture_thread_id;
    uint32_t processor_number;
    uint64_t thread_id;
    uint32_t stack_id;
    uint64_t timestamp;
    mantra_guid activity, related;
    uint32_t payload_size;
} row_state;

/* A block being assembled: content at base + HEADROOM, one spare byte after it for EndObject. */
typedef struct block {
    uint8_t *base;
    size_t cap; /* content capacity */
    size_t len; /* content bytes used (incl. the block's own header) */
    size_t header;
    uint64_t min_ts, max_ts;
    uint32_t rows;
    row_state prev;
} block;

typedef struct event_def {
    const mantra_event_desc *desc; /* NULL for raw definitions */
    uint8_t *record;               /* metadata record (§5.1), first 4 bytes = id once assigned */
    size_t record_size;
    uint32_t metadata_id;          /* 0 until first use */
} event_def;

typedef struct thread_entry {
    uint64_t capture_thread_id;
    uint32_t last_sequence;
    int has_events;
    uint64_t last_timestamp;
} thread_entry;

typedef struct stack_entry {
    uint32_t offset, frames; /* into stack_ips */
    uint64_t hash;
} stack_entry;

struct mantra_nettrace_writer {
    mantra_sink *sink;
    mantra_nettrace_options opts;
    int failed;   /* sticky output error */
    int finished;
    char err[256];

    block events, meta, stacks;

    /* definitions: keys are index + 1 */
    event_def *defs;
    uint32_t def_count, def_cap;
    uint32_t *desc_slots; /* open addressing: key of a desc definition, 0 = empty */
    uint32_t desc_slot_count;
    uint32_t next_metadata_id;

    /* capture threads in order of first appearance */
    thread_entry *threads;
    uint32_t thread_count, thread_cap;
    uint32_t *thread_slots; /* index + 1, 0 = empty */
    uint32_t thread_slot_count;
    uint64_t prev_capture_thread; /* of the previous event in file order (CALLER_RUNS check) */

    /* stacks of the current sequence-point region (§6): ids are index + 1 */
    stack_entry *stack_list;
    uint32_t stack_count, stack_cap;
    uint64_t *stack_ips;
    size_t stack_ips_len, stack_ips_cap;
    uint32_t *stack_slots; /* id, 0 = empty */
    uint32_t stack_slot_count;
    uint32_t stack_first_pending; /* id of the first stack in the pending StackBlock */
    uint32_t empty_stack_id;      /* id of the size-0 stack in the current region, 0: none yet */
    uint32_t last_thread;         /* index + 1 of the thread of the previous event (fast lookup) */

    uint8_t *sp_buf;
    size_t sp_cap;

    uint64_t max_timestamp;
    int have_events;
    uint64_t last_sp_offset;
    mantra_nettrace_stats st;
};

#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 3, 4)))
#endif
static int fail(mantra_nettrace_writer *w, int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->err, sizeof w->err, fmt, ap);
    va_end(ap);
    return code;
}

/* ---- little-endian helpers ------------------------------------------------------------------ */

static uint8_t *put_u16(uint8_t *p, uint16_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    return p + 2;
}
static uint8_t *put_u32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
    return p + 4;
}
static uint8_t *put_u64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
    return p + 8;
}
static uint8_t *put_guid(uint8_t *p, const mantra_guid *g) {
    p = put_u32(p, g->data1);
    p = put_u16(p, g->data2);
    p = put_u16(p, g->data3);
    memcpy(p, g->data4, 8);
    return p + 8;
}
static int guid_eq(const mantra_guid *a, const mantra_guid *b) {
    return a->data1 == b->data1 && a->data2 == b->data2 && a->data3 == b->data3 &&
           memcmp(a->data4, b->data4, 8) == 0;
}

static uint64_t mix64(uint64_t x) {
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    x ^= x >> 33;
    x *= UINT64_C(0xc4ceb9fe1a85ec53);
    x ^= x >> 33;
    return x;
}

/* ---- SYSTEMTIME (§2.4) ------------------------------------------------------------------------ */

int mantra_nettrace_systemtime(int64_t unix_ms, uint16_t out[8]) {
    /* Years 1601..30827 are what SYSTEMTIME / .NET DateTime accept. */
    const int64_t min_ms = INT64_C(-11644473600000);  /* 1601-01-01 */
    const int64_t max_ms = INT64_C(910692730085477); /* 30828-09-14 (FILETIME max), well within */
    if (!out || unix_ms < min_ms || unix_ms > max_ms)
        return MANTRA_EINVAL;
    int64_t days = unix_ms / 86400000, ms = unix_ms % 86400000;
    if (ms < 0) {
        ms += 86400000;
        days--;
    }
    /* civil_from_days (H. Hinnant's algorithm, proleptic Gregorian). */
    int64_t z = days + 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t y = yoe + era * 400;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    int64_t d = doy - (153 * mp + 2) / 5 + 1;
    int64_t m = mp < 10 ? mp + 3 : mp - 9;
    if (m <= 2)
        y++;
    if (y > 30827)
        return MANTRA_EINVAL;
    int64_t dow = (days % 7 + 7 + 4) % 7; /* 1970-01-01 was a Thursday (4); Sunday = 0 */
    out[0] = (uint16_t)y;
    out[1] = (uint16_t)m;
    out[2] = (uint16_t)dow;
    out[3] = (uint16_t)d;
    out[4] = (uint16_t)(ms / 3600000);
    out[5] = (uint16_t)(ms / 60000 % 60);
    out[6] = (uint16_t)(ms / 1000 % 60);
    out[7] = (uint16_t)(ms % 1000);
    return MANTRA_OK;
}

/* ---- options ------------------------------------------------------------------------------- */

void mantra_nettrace_options_init(mantra_nettrace_options *o) {
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->sync_time_unix_ms = MANTRA_NETTRACE_TIME_NOW;
    o->ticks_per_second = 1000000000u;
    o->pointer_size = (uint32_t)sizeof(void *);
    o->process_id = mantra_pal_pid();
    o->processor_count = mantra_pal_cpu_count();
    o->sampling_rate_ns = 1000000u;
    o->block_bytes = DEFAULT_BLOCK_BYTES;
    o->order = MANTRA_NETTRACE_GLOBAL_ORDER;
}

/* ---- output ------------------------------------------------------------------------------- */

static int sink_write(mantra_nettrace_writer *w, const void *p, size_t n) {
    int rc = mantra_sink_write(w->sink, p, n);
    if (rc != MANTRA_OK) {
        w->failed = rc;
        w->st.io_errors++;
        fail(w, rc, "output error: %s", mantra_sink_last_error(w->sink));
    }
    w->st.bytes = mantra_sink_bytes_written(w->sink);
    return rc;
}

/* Writes a block object (§2.3, §2.5) whose content is b->base[HEADROOM .. HEADROOM+len) with one
 * spare byte after it, as a single sink write: framing, BlockSize, padding to the absolute offset,
 * content, EndObject. */
static int write_block_object(mantra_nettrace_writer *w, uint8_t *content, size_t len, const char *name) {
    size_t name_len = strlen(name);
    uint64_t offset = mantra_sink_bytes_written(w->sink);
    size_t frame = 3 + 12 + name_len + 1; /* tags, Version, MinReaderVersion, NameLength, name, EndObject */
    uint64_t after_size = offset + frame + 4;
    size_t pad = (size_t)((4 - (after_size & 3)) & 3); /* §2.5: pad = (4 - (offset & 3)) & 3 */
    size_t prefix = frame + 4 + pad;
    uint8_t *p = content - prefix, *start = p;
    *p++ = 0x05; /* BeginPrivateObject (object) */
    *p++ = 0x05; /* BeginPrivateObject (type) */
    *p++ = 0x01; /* NullReference: type of the type */
    p = put_u32(p, 2); /* Version: every block is 2 (§2.3 table) */
    p = put_u32(p, 2); /* MinimumReaderVersion */
    p = put_u32(p, (uint32_t)name_len);
    memcpy(p, name, name_len);
    p += name_len;
    *p++ = 0x06; /* EndObject (type) */
    p = put_u32(p, (uint32_t)len);
    memset(p, 0, pad);
    content[len] = 0x06; /* EndObject (object) */
    return sink_write(w, start, prefix + len + 1);
}

static void block_reset(block *b) {
    b->len = b->header;
    b->rows = 0;
    b->min_ts = UINT64_MAX;
    b->max_ts = 0;
    memset(&b->prev, 0, sizeof b->prev);
}

static int block_init(block *b, size_t cap, size_t header) {
    b->base = malloc(HEADROOM + cap + 1);
    if (!b->base)
        return MANTRA_ENOMEM;
    b->cap = cap;
    b->header = header;
    block_reset(b);
    return MANTRA_OK;
}

/* Event/Metadata block header (§3.1): HeaderSize 20, Flags 1 (compressed), Min/MaxTimestamp. */
static void finish_event_header(block *b) {
    uint8_t *c = b->base + HEADROOM;
    put_u16(c, BLOCK_HEADER_SIZE);
    put_u16(c + 2, 1);
    put_u64(c + 4, b->rows ? b->min_ts : 0);
    put_u64(c + 12, b->max_ts);
}

/* Writes the pending MetadataBlock, StackBlock and EventBlock, in that order (§2.7, §9 item 5). */
static int flush_blocks(mantra_nettrace_writer *w) {
    int rc;
    if (w->failed)
        return w->failed;
    if (w->meta.rows) {
        finish_event_header(&w->meta);
        if ((rc = write_block_object(w, w->meta.base + HEADROOM, w->meta.len, "MetadataBlock")) != MANTRA_OK)
            return rc;
        w->st.metadata_blocks++;
        block_reset(&w->meta);
    }
    if (w->stacks.rows) {
        /* §6: FirstId, Count, then the entries. */
        uint8_t *c = w->stacks.base + HEADROOM;
        put_u32(c, w->stack_first_pending);
        put_u32(c + 4, w->stacks.rows);
        if ((rc = write_block_object(w, c, w->stacks.len, "StackBlock")) != MANTRA_OK)
            return rc;
        w->st.stack_blocks++;
        w->stack_first_pending += w->stacks.rows;
        block_reset(&w->stacks);
    }
    if (w->events.rows) {
        finish_event_header(&w->events);
        if ((rc = write_block_object(w, w->events.base + HEADROOM, w->events.len, "EventBlock")) != MANTRA_OK)
            return rc;
        w->st.event_blocks++;
        block_reset(&w->events);
    }
    return MANTRA_OK;
}

/* ---- compressed rows (§3.2) ------------------------------------------------------------------ */

/* Encodes a row header for `row` against b->prev into out; returns its length. */
static size_t encode_row_header(const row_state *prev, const row_state *row, int sorted, uint8_t *out) {
    uint8_t flags = 0;
    uint8_t *p = out + 1;
    if (row->metadata_id != prev->metadata_id) {
        flags |= 0x01;
        p += mantra_varint_put(p, row->metadata_id);
    }
    /* Seq = prevSeq + SeqDelta + 1 when 0x02 is set, else prevSeq + (MetadataId != 0), 32-bit wrap. */
    uint32_t implied = prev->sequence + (row->metadata_id != 0 ? 1u : 0u);
    if (row->sequence != implied || row->capture_thread_id != prev->capture_thread_id ||
        row->processor_number != prev->processor_number) {
        flags |= 0x02;
        p += mantra_varint_put(p, (uint32_t)(row->sequence - prev->sequence - 1u));
        p += mantra_varint_put(p, row->capture_thread_id);
        p += mantra_varint_put(p, row->processor_number);
    }
    if (row->thread_id != prev->thread_id) {
        flags |= 0x04;
        p += mantra_varint_put(p, row->thread_id);
    }
    if (row->stack_id != prev->stack_id) {
        flags |= 0x08;
        p += mantra_varint_put(p, row->stack_id);
    }
    /* Always present; 64-bit wrap-around delta ("negative" deltas are 10-byte varints). */
    p += mantra_varint_put(p, row->timestamp - prev->timestamp);
    if (!guid_eq(&row->activity, &prev->activity)) {
        flags |= 0x10;
        p = put_guid(p, &row->activity);
    }
    if (!guid_eq(&row->related, &prev->related)) {
        flags |= 0x20;
        p = put_guid(p, &row->related);
    }
    if (sorted)
        flags |= 0x40;
    if (row->payload_size != prev->payload_size) {
        flags |= 0x80;
        p += mantra_varint_put(p, row->payload_size);
    }
    out[0] = flags;
    return (size_t)(p - out);
}

static void block_note_row(block *b, const row_state *row) {
    b->prev = *row;
    b->rows++;
    if (row->timestamp < b->min_ts)
        b->min_ts = row->timestamp;
    if (row->timestamp > b->max_ts)
        b->max_ts = row->timestamp;
}

/* ---- creation --------------------------------------------------------------------------------- */

static int write_trace_object(mantra_nettrace_writer *w) {
    uint16_t st[8];
    int64_t ms = w->opts.sync_time_unix_ms;
    if (ms == MANTRA_NETTRACE_TIME_NOW) {
        ms = mantra_pal_unix_ms();
    }
    if (mantra_nettrace_systemtime(ms, st) != MANTRA_OK)
        return fail(w, MANTRA_EINVAL, "sync time %lld ms is outside years 1601..30827", (long long)ms);
    uint8_t buf[128], *p = buf;
    /* §2.1 stream header */
    memcpy(p, "Nettrace", 8);
    p = put_u32(p + 8, 20);
    memcpy(p, "!FastSerialization.1", 20);
    p += 20;
    /* §2.3 Trace object, version 4, minimum reader version 4 */
    *p++ = 0x05;
    *p++ = 0x05;
    *p++ = 0x01;
    p = put_u32(p, 4);
    p = put_u32(p, 4);
    p = put_u32(p, 5);
    memcpy(p, "Trace", 5);
    p += 5;
    *p++ = 0x06;
    /* §2.4 payload, 48 bytes */
    for (int i = 0; i < 8; i++)
        p = put_u16(p, st[i]);
    p = put_u64(p, w->opts.sync_time_ticks);
    p = put_u64(p, w->opts.ticks_per_second);
    p = put_u32(p, w->opts.pointer_size);
    p = put_u32(p, w->opts.process_id);
    p = put_u32(p, w->opts.processor_count);
    p = put_u32(p, w->opts.sampling_rate_ns);
    *p++ = 0x06;
    return sink_write(w, buf, (size_t)(p - buf));
}

int mantra_nettrace_writer_new(mantra_nettrace_writer **out, mantra_sink *sink, const mantra_nettrace_options *opts) {
    if (!out)
        return MANTRA_EINVAL;
    *out = NULL;
    if (!sink)
        return MANTRA_EINVAL;
    mantra_nettrace_writer *w = calloc(1, sizeof *w);
    if (!w)
        return MANTRA_ENOMEM;
    if (opts)
        w->opts = *opts;
    else
        mantra_nettrace_options_init(&w->opts);
    mantra_nettrace_options *o = &w->opts;
    int rc = MANTRA_OK;
    if (o->block_bytes == 0)
        o->block_bytes = DEFAULT_BLOCK_BYTES;
    if (o->block_bytes < MIN_BLOCK_BYTES)
        o->block_bytes = MIN_BLOCK_BYTES;
    if (o->block_bytes > 16u * 1024 * 1024)
        rc = fail(w, MANTRA_EINVAL, "block_bytes %u is over 16 MiB", o->block_bytes);
    else if (o->pointer_size != 4 && o->pointer_size != 8)
        rc = fail(w, MANTRA_EINVAL, "pointer_size must be 4 or 8, not %u", o->pointer_size);
    else if (o->ticks_per_second == 0)
        rc = fail(w, MANTRA_EINVAL, "ticks_per_second must be > 0");
    else if (o->order > MANTRA_NETTRACE_CALLER_RUNS)
        rc = fail(w, MANTRA_EINVAL, "unknown order mode %u", o->order);
    else if (mantra_sink_bytes_written(sink) != 0)
        rc = fail(w, MANTRA_EINVAL, "the sink has already been written to (offsets must start at 0)");
    if (rc != MANTRA_OK) {
        w->failed = rc;
        *out = w;
        return rc;
    }
    w->sink = sink;
    size_t row_max = ROW_HEADER_MAX + MANTRA_MAX_PAYLOAD;
    if (block_init(&w->events, o->block_bytes + row_max, BLOCK_HEADER_SIZE) != MANTRA_OK ||
        block_init(&w->meta, o->block_bytes + row_max, BLOCK_HEADER_SIZE) != MANTRA_OK ||
        block_init(&w->stacks, o->block_bytes + 4 + (size_t)MAX_STACK_FRAMES * 8, 8) != MANTRA_OK) {
        mantra_nettrace_writer_free(w);
        return MANTRA_ENOMEM;
    }
    w->stack_first_pending = 1;
    w->next_metadata_id = 1;
    w->last_sp_offset = 0;
    rc = write_trace_object(w);
    if (rc != MANTRA_OK)
        w->failed = rc;
    *out = w;
    return rc;
}

void mantra_nettrace_writer_free(mantra_nettrace_writer *w) {
    if (!w)
        return;
    free(w->events.base);
    free(w->meta.base);
    free(w->stacks.base);
    for (uint32_t i = 0; i < w->def_count; i++)
        free(w->defs[i].record);
    free(w->defs);
    free(w->desc_slots);
    free(w->threads);
    free(w->thread_slots);
    free(w->stack_list);
    free(w->stack_ips);
    free(w->stack_slots);
    free(w->sp_buf);
    free(w);
}

static int check_usable(mantra_nettrace_writer *w) {
    if (w->failed)
        return w->failed;
    if (w->finished)
        return fail(w, MANTRA_ESTATE, "the trace is finished");
    return MANTRA_OK;
}

/* ---- definitions ------------------------------------------------------------------------------- */

static int add_def(mantra_nettrace_writer *w, const mantra_event_desc *desc, const char *provider,
                   const void *blob, size_t blob_size, mantra_nettrace_event_key *key) {
    size_t units, bytes;
    units = mantra_utf8_utf16_units(provider, &bytes);
    if (units == SIZE_MAX)
        return fail(w, MANTRA_EINVAL, "provider name is not valid UTF-8");
    /* §5.1: int32 MetadataId, UTF-16 provider name + NUL, then the blob from EventId on. */
    size_t size = 4 + (units + 1) * 2 + blob_size;
    if (size > MANTRA_MAX_PAYLOAD)
        return fail(w, MANTRA_ERANGE, "metadata record of %zu bytes is over %u", size, MANTRA_MAX_PAYLOAD);
    if (w->def_count == w->def_cap) {
        uint32_t cap = w->def_cap ? w->def_cap * 2 : 16;
        event_def *d = realloc(w->defs, cap * sizeof *d);
        if (!d)
            return fail(w, MANTRA_ENOMEM, "out of memory for event definitions");
        w->defs = d;
        w->def_cap = cap;
    }
    uint8_t *rec = malloc(size);
    if (!rec)
        return fail(w, MANTRA_ENOMEM, "out of memory for a metadata record");
    put_u32(rec, 0);
    size_t n = mantra_utf8_to_utf16le(provider, bytes, rec + 4);
    rec[4 + n] = 0;
    rec[5 + n] = 0;
    if (blob_size)
        memcpy(rec + 6 + n, blob, blob_size);
    event_def *d = &w->defs[w->def_count++];
    d->desc = desc;
    d->record = rec;
    d->record_size = size;
    d->metadata_id = 0;
    *key = w->def_count;
    return MANTRA_OK;
}

int mantra_nettrace_add_event_raw(mantra_nettrace_writer *w, const char *provider_name, const void *metadata,
                                  size_t metadata_size, mantra_nettrace_event_key *key) {
    if (!w || !key)
        return MANTRA_EINVAL;
    *key = 0;
    int rc = check_usable(w);
    if (rc != MANTRA_OK)
        return rc;
    if (!provider_name || (!metadata && metadata_size))
        return fail(w, MANTRA_EINVAL, "add_event_raw: NULL provider name or metadata");
    /* TE reads EventId, EventName, Keywords, Version and Level at least (§5.1): 22 bytes minimum. */
    if (metadata_size < 22)
        return fail(w, MANTRA_EINVAL, "metadata blob of %zu bytes is shorter than EventId..Level", metadata_size);
    return add_def(w, NULL, provider_name, metadata, metadata_size, key);
}

int mantra_nettrace_add_event(mantra_nettrace_writer *w, const mantra_provider_desc *provider,
                              const mantra_event_desc *desc, mantra_nettrace_event_key *key) {
    if (!w || !key)
        return MANTRA_EINVAL;
    *key = 0;
    int rc = check_usable(w);
    if (rc != MANTRA_OK)
        return rc;
    if (!provider || !provider->name || !desc || (!desc->metadata && desc->metadata_size))
        return fail(w, MANTRA_EINVAL, "add_event: NULL provider, name, desc or metadata");
    uint64_t h = mix64((uint64_t)(uintptr_t)desc);
    if (w->desc_slots) {
        uint32_t mask = w->desc_slot_count - 1;
        for (uint32_t i = (uint32_t)h & mask;; i = (i + 1) & mask) {
            uint32_t k = w->desc_slots[i];
            if (k == 0)
                break;
            if (w->defs[k - 1].desc == desc) {
                *key = k;
                return MANTRA_OK;
            }
        }
    }
    /* grow the pointer table at load 1/2 */
    if ((w->def_count + 1) * 2 > w->desc_slot_count) {
        uint32_t count = w->desc_slot_count ? w->desc_slot_count * 2 : 64;
        uint32_t *slots = calloc(count, sizeof *slots);
        if (!slots)
            return fail(w, MANTRA_ENOMEM, "out of memory for the event table");
        for (uint32_t j = 0; j < w->def_count; j++) {
            if (!w->defs[j].desc)
                continue;
            uint32_t i = (uint32_t)mix64((uint64_t)(uintptr_t)w->defs[j].desc) & (count - 1);
            while (slots[i])
                i = (i + 1) & (count - 1);
            slots[i] = j + 1;
        }
        free(w->desc_slots);
        w->desc_slots = slots;
        w->desc_slot_count = count;
    }
    const uint8_t *blob = desc->metadata;
    uint8_t minimal[64];
    size_t blob_size = desc->metadata_size;
    if (blob_size == 0) {
        /* No generated blob: minimal metadata like the runtime's (§5.5): id, "", keywords,
         * version, level, FieldCount 0. */
        uint8_t *p = minimal;
        p = put_u32(p, desc->id);
        p = put_u16(p, 0);
        p = put_u64(p, desc->keywords);
        p = put_u32(p, desc->version);
        p = put_u32(p, desc->level);
        p = put_u32(p, 0);
        blob = minimal;
        blob_size = (size_t)(p - minimal);
    }
    rc = add_def(w, desc, provider->name, blob, blob_size, key);
    if (rc != MANTRA_OK)
        return rc;
    uint32_t mask = w->desc_slot_count - 1;
    uint32_t i = (uint32_t)h & mask;
    while (w->desc_slots[i])
        i = (i + 1) & mask;
    w->desc_slots[i] = *key;
    return MANTRA_OK;
}

uint32_t mantra_nettrace_metadata_id(const mantra_nettrace_writer *w, mantra_nettrace_event_key key) {
    if (!w || key == 0 || key > w->def_count)
        return 0;
    return w->defs[key - 1].metadata_id;
}

/* ---- threads ----------------------------------------------------------------------------------- */

static thread_entry *find_thread(mantra_nettrace_writer *w, uint64_t tid) {
    if (!w->thread_slots)
        return NULL;
    if (w->last_thread && w->threads[w->last_thread - 1].capture_thread_id == tid)
        return &w->threads[w->last_thread - 1]; /* runs of one thread's events are the rule */
    uint32_t mask = w->thread_slot_count - 1;
    for (uint32_t i = (uint32_t)mix64(tid) & mask;; i = (i + 1) & mask) {
        uint32_t k = w->thread_slots[i];
        if (k == 0)
            return NULL;
        if (w->threads[k - 1].capture_thread_id == tid) {
            w->last_thread = k;
            return &w->threads[k - 1];
        }
    }
}

static thread_entry *add_thread(mantra_nettrace_writer *w, uint64_t tid) {
    if (w->thread_count == w->thread_cap) {
        uint32_t cap = w->thread_cap ? w->thread_cap * 2 : 16;
        thread_entry *t = realloc(w->threads, cap * sizeof *t);
        if (!t)
            return NULL;
        w->threads = t;
        w->thread_cap = cap;
    }
    if ((w->thread_count + 1) * 2 > w->thread_slot_count) {
        uint32_t count = w->thread_slot_count ? w->thread_slot_count * 2 : 64;
        uint32_t *slots = calloc(count, sizeof *slots);
        if (!slots)
            return NULL;
        for (uint32_t j = 0; j < w->thread_count; j++) {
            uint32_t i = (uint32_t)mix64(w->threads[j].capture_thread_id) & (count - 1);
            while (slots[i])
                i = (i + 1) & (count - 1);
            slots[i] = j + 1;
        }
        free(w->thread_slots);
        w->thread_slots = slots;
        w->thread_slot_count = count;
    }
    uint32_t mask = w->thread_slot_count - 1;
    uint32_t i = (uint32_t)mix64(tid) & mask;
    while (w->thread_slots[i])
        i = (i + 1) & mask;
    thread_entry *t = &w->threads[w->thread_count++];
    w->thread_slots[i] = w->thread_count;
    t->capture_thread_id = tid;
    t->last_sequence = 0;
    t->has_events = 0;
    t->last_timestamp = 0;
    w->st.threads = w->thread_count;
    return t;
}

int mantra_nettrace_thread_dropped(mantra_nettrace_writer *w, uint64_t capture_thread_id, uint32_t n) {
    if (!w)
        return MANTRA_EINVAL;
    int rc = check_usable(w);
    if (rc != MANTRA_OK)
        return rc;
    thread_entry *t = find_thread(w, capture_thread_id);
    if (!t && !(t = add_thread(w, capture_thread_id)))
        return fail(w, MANTRA_ENOMEM, "out of memory for the thread table");
    t->last_sequence += n;
    return MANTRA_OK;
}

/* ---- stacks (§6) ------------------------------------------------------------------------------- */

static void stacks_new_region(mantra_nettrace_writer *w) {
    w->stack_count = 0;
    w->stack_ips_len = 0;
    w->stack_first_pending = 1; /* ids restart at 1 after each sequence point */
    w->empty_stack_id = 0;
    if (w->stack_slots)
        memset(w->stack_slots, 0, w->stack_slot_count * sizeof *w->stack_slots);
}

/* The id of this stack in the current region; a new one is appended to the pending StackBlock
 * (flushing the pending blocks first when it is full). Returns 0 on allocation/IO failure. */
static uint32_t stack_id_lookup(mantra_nettrace_writer *w, const uint64_t *ips, uint32_t frames);

/* Most events have no stack: their size-0 entry's id is kept for the region. */
static uint32_t stack_id(mantra_nettrace_writer *w, const uint64_t *ips, uint32_t frames) {
    if (frames == 0 && w->empty_stack_id)
        return w->empty_stack_id;
    uint32_t id = stack_id_lookup(w, ips, frames);
    if (frames == 0)
        w->empty_stack_id = id;
    return id;
}

static uint32_t stack_id_lookup(mantra_nettrace_writer *w, const uint64_t *ips, uint32_t frames) {
    uint64_t mask_ip = w->opts.pointer_size == 4 ? UINT64_C(0xffffffff) : UINT64_MAX;
    uint64_t h = mix64(frames);
    for (uint32_t i = 0; i < frames; i++)
        h = mix64(h ^ (ips[i] & mask_ip));
    if (w->stack_slots) {
        uint32_t mask = w->stack_slot_count - 1;
        for (uint32_t i = (uint32_t)h & mask;; i = (i + 1) & mask) {
            uint32_t id = w->stack_slots[i];
            if (id == 0)
                break;
            const stack_entry *e = &w->stack_list[id - 1];
            if (e->hash == h && e->frames == frames) {
                const uint64_t *s = w->stack_ips + e->offset;
                uint32_t k = 0;
                while (k < frames && s[k] == (ips[k] & mask_ip))
                    k++;
                if (k == frames)
                    return id;
            }
        }
    }
    /* A new stack: make room in the pending StackBlock first (a flush keeps the region). */
    size_t entry = 4 + (size_t)frames * w->opts.pointer_size;
    if (w->stacks.rows && w->stacks.len + entry > w->opts.block_bytes) {
        if (flush_blocks(w) != MANTRA_OK)
            return 0;
    }
    if (w->stack_count == w->stack_cap) {
        uint32_t cap = w->stack_cap ? w->stack_cap * 2 : 256;
        stack_entry *l = realloc(w->stack_list, cap * sizeof *l);
        if (!l)
            return 0;
        w->stack_list = l;
        w->stack_cap = cap;
    }
    if (w->stack_ips_len + frames > w->stack_ips_cap) {
        size_t cap = w->stack_ips_cap ? w->stack_ips_cap : 4096;
        while (w->stack_ips_len + frames > cap)
            cap *= 2;
        uint64_t *ip = realloc(w->stack_ips, cap * sizeof *ip);
        if (!ip)
            return 0;
        w->stack_ips = ip;
        w->stack_ips_cap = cap;
    }
    if ((w->stack_count + 1) * 2 > w->stack_slot_count) {
        uint32_t count = w->stack_slot_count ? w->stack_slot_count * 2 : 1024;
        uint32_t *slots = calloc(count, sizeof *slots);
        if (!slots)
            return 0;
        for (uint32_t j = 0; j < w->stack_count; j++) {
            uint32_t i = (uint32_t)w->stack_list[j].hash & (count - 1);
            while (slots[i])
                i = (i + 1) & (count - 1);
            slots[i] = j + 1;
        }
        free(w->stack_slots);
        w->stack_slots = slots;
        w->stack_slot_count = count;
    }
    stack_entry *e = &w->stack_list[w->stack_count++];
    e->offset = (uint32_t)w->stack_ips_len;
    e->frames = frames;
    e->hash = h;
    uint8_t *p = w->stacks.base + HEADROOM + w->stacks.len;
    p = put_u32(p, (uint32_t)(frames * w->opts.pointer_size));
    for (uint32_t i = 0; i < frames; i++) {
        uint64_t ip = ips[i] & mask_ip;
        w->stack_ips[w->stack_ips_len++] = ip;
        p = w->opts.pointer_size == 4 ? put_u32(p, (uint32_t)ip) : put_u64(p, ip);
    }
    w->stacks.len += entry;
    w->stacks.rows++;
    w->st.stacks++;
    uint32_t id = w->stack_count;
    uint32_t mask = w->stack_slot_count - 1;
    uint32_t i = (uint32_t)h & mask;
    while (w->stack_slots[i])
        i = (i + 1) & mask;
    w->stack_slots[i] = id;
    return id;
}

/* ---- sequence points (§7) ------------------------------------------------------------------ */

static int write_sequence_point(mantra_nettrace_writer *w) {
    int rc = flush_blocks(w);
    if (rc != MANTRA_OK)
        return rc;
    size_t len = 12 + 12 * (size_t)w->thread_count;
    if (HEADROOM + len + 1 > w->sp_cap) {
        uint8_t *b = realloc(w->sp_buf, HEADROOM + len + 1);
        if (!b)
            return fail(w, MANTRA_ENOMEM, "out of memory for a sequence point");
        w->sp_buf = b;
        w->sp_cap = HEADROOM + len + 1;
    }
    uint8_t *c = w->sp_buf + HEADROOM, *p = c;
    p = put_u64(p, w->max_timestamp);
    p = put_u32(p, w->thread_count);
    for (uint32_t i = 0; i < w->thread_count; i++) {
        p = put_u64(p, w->threads[i].capture_thread_id);
        p = put_u32(p, w->threads[i].last_sequence);
    }
    if ((rc = write_block_object(w, c, len, "SPBlock")) != MANTRA_OK)
        return rc;
    w->st.sequence_points++;
    stacks_new_region(w);
    w->last_sp_offset = mantra_sink_bytes_written(w->sink);
    return MANTRA_OK;
}

int mantra_nettrace_sequence_point(mantra_nettrace_writer *w) {
    if (!w)
        return MANTRA_EINVAL;
    int rc = check_usable(w);
    return rc != MANTRA_OK ? rc : write_sequence_point(w);
}

int mantra_nettrace_flush(mantra_nettrace_writer *w) {
    if (!w)
        return MANTRA_EINVAL;
    int rc = check_usable(w);
    if (rc == MANTRA_OK)
        rc = flush_blocks(w);
    if (rc == MANTRA_OK && (rc = mantra_sink_flush(w->sink)) != MANTRA_OK) {
        w->failed = rc;
        w->st.io_errors++;
        fail(w, rc, "output error: %s", mantra_sink_last_error(w->sink));
    }
    return rc;
}

int mantra_nettrace_finish(mantra_nettrace_writer *w) {
    if (!w)
        return MANTRA_EINVAL;
    int rc = check_usable(w);
    if (rc != MANTRA_OK)
        return rc;
    if ((rc = write_sequence_point(w)) != MANTRA_OK)
        return rc;
    static const uint8_t end = 0x01; /* §2.6 NullReference = end of stream */
    if ((rc = sink_write(w, &end, 1)) != MANTRA_OK)
        return rc;
    w->finished = 1;
    if ((rc = mantra_sink_flush(w->sink)) != MANTRA_OK) {
        w->failed = rc;
        w->st.io_errors++;
        return fail(w, rc, "output error: %s", mantra_sink_last_error(w->sink));
    }
    return MANTRA_OK;
}

/* ---- events -------------------------------------------------------------------------------------- */

static const mantra_guid zero_guid;

/* An event between prepare_event() and commit_event(). */
typedef struct pending_event {
    row_state row;
    int sorted;
    size_t header_len;
    thread_entry *thread;
} pending_event;

static int refuse(mantra_nettrace_writer *w, int code) {
    w->st.refused++;
    return code;
}

/* Everything before the payload: checks, metadata row, stack, row header. Sets *payload_at to where
 * the payload goes; the row counts once commit_event() has run. */
static int prepare_event(mantra_nettrace_writer *w, const mantra_nettrace_event *ev, size_t size, pending_event *pe,
                         uint8_t **payload_at) {
    int rc = check_usable(w);
    if (rc != MANTRA_OK)
        return rc;
    if (!ev)
        return refuse(w, fail(w, MANTRA_EINVAL, "NULL event"));
    if (ev->key == 0 || ev->key > w->def_count)
        return refuse(w, fail(w, MANTRA_EINVAL, "unknown event key %u", ev->key));
    if (size > MANTRA_MAX_PAYLOAD)
        return refuse(w, fail(w, MANTRA_ERANGE, "payload of %zu bytes is over %u (§4)", size, MANTRA_MAX_PAYLOAD));
    if (ev->stack_frames > MAX_STACK_FRAMES || (ev->stack_frames && !ev->stack))
        return refuse(w, fail(w, MANTRA_EINVAL, "bad stack (%u frames, max %u)", ev->stack_frames, MAX_STACK_FRAMES));
    uint64_t capture = ev->capture_thread_id ? ev->capture_thread_id : ev->thread_id;
    thread_entry *t = find_thread(w, capture);
    int sorted = 1;
    /* §4.1 ordering rules */
    if (w->opts.order == MANTRA_NETTRACE_GLOBAL_ORDER) {
        if (w->have_events && ev->timestamp < w->max_timestamp)
            return refuse(w, fail(w, MANTRA_EORDER, "timestamp %llu is older than %llu (global order mode)",
                                  (unsigned long long)ev->timestamp, (unsigned long long)w->max_timestamp));
    } else {
        sorted = (ev->flags & MANTRA_NETTRACE_EVENT_SORTED) != 0;
        if (t && t->has_events && ev->timestamp < t->last_timestamp)
            return refuse(w, fail(w, MANTRA_EORDER, "timestamp %llu is older than the thread's previous %llu",
                                  (unsigned long long)ev->timestamp, (unsigned long long)t->last_timestamp));
        if (!sorted && (!w->have_events || capture != w->prev_capture_thread))
            return refuse(w, fail(w, MANTRA_EORDER, "capture thread changes on a row not marked sorted (§4.1)"));
    }
    /* Automatic sequence point, taken between events so that nothing of this one is pending. */
    if (w->opts.sequence_point_bytes &&
        mantra_sink_bytes_written(w->sink) - w->last_sp_offset >= w->opts.sequence_point_bytes &&
        (rc = write_sequence_point(w)) != MANTRA_OK)
        return rc;
    /* Room for the row in the pending EventBlock: flush first when it would overflow (§9: bounded). */
    if (w->events.rows && w->events.len + ROW_HEADER_MAX + size > w->opts.block_bytes &&
        (rc = flush_blocks(w)) != MANTRA_OK)
        return rc;
    if (!t && !(t = add_thread(w, capture)))
        return fail(w, MANTRA_ENOMEM, "out of memory for the thread table");
    /* First use of a definition: assign its metadata id and queue the metadata row (§3.4). */
    event_def *d = &w->defs[ev->key - 1];
    if (d->metadata_id == 0) {
        if (w->meta.rows && w->meta.len + ROW_HEADER_MAX + d->record_size > w->opts.block_bytes &&
            (rc = flush_blocks(w)) != MANTRA_OK)
            return rc;
        d->metadata_id = w->next_metadata_id++;
        put_u32(d->record, d->metadata_id);
        row_state mr;
        memset(&mr, 0, sizeof mr);
        mr.timestamp = ev->timestamp;
        mr.payload_size = (uint32_t)d->record_size;
        uint8_t *p = w->meta.base + HEADROOM + w->meta.len;
        size_t h = encode_row_header(&w->meta.prev, &mr, 1, p);
        memcpy(p + h, d->record, d->record_size);
        w->meta.len += h + d->record_size;
        block_note_row(&w->meta, &mr);
        w->st.metadata++;
    }
    uint32_t sid = stack_id(w, ev->stack, ev->stack ? ev->stack_frames : 0);
    if (sid == 0)
        return w->failed ? w->failed : fail(w, MANTRA_ENOMEM, "out of memory for stacks");
    row_state *r = &pe->row;
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
    uint8_t *p = w->events.base + HEADROOM + w->events.len;
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
        return refuse(w, fail(w, MANTRA_EINVAL, "NULL payload of %zu bytes", size));
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
        return refuse(w, fail(w, MANTRA_EINVAL, "NULL data descriptors"));
    int64_t size = mantra_payload_size(data, count);
    if (size < 0)
        return refuse(w, fail(w, MANTRA_EINVAL, "a string argument is not valid UTF-8"));
    if ((uint64_t)size > MANTRA_MAX_PAYLOAD)
        return refuse(w, fail(w, MANTRA_ERANGE, "payload of %lld bytes is over %u (§4)", (long long)size,
                              MANTRA_MAX_PAYLOAD));
    pending_event pe;
    uint8_t *at;
    int rc = prepare_event(w, ev, (size_t)size, &pe, &at);
    if (rc != MANTRA_OK)
        return rc;
    if (size && mantra_payload_serialize(data, count, at, (size_t)size) != size) {
        /* cannot happen after a successful sizing; undo the row header */
        w->events.len -= pe.header_len;
        return refuse(w, fail(w, MANTRA_EINVAL, "payload serialisation failed"));
    }
    commit_event(w, &pe);
    return MANTRA_OK;
}

void mantra_nettrace_get_stats(const mantra_nettrace_writer *w, mantra_nettrace_stats *out) {
    if (!out)
        return;
    if (!w) {
        memset(out, 0, sizeof *out);
        return;
    }
    *out = w->st;
}

const char *mantra_nettrace_last_error(const mantra_nettrace_writer *w) { return w ? w->err : "no writer"; }
