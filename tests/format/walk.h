/* A tiny, strict nettrace V5 walker for the writer tests (independent of the reader under
 * runtime/src/reader/): object framing, block padding and compressed rows as dotnet/runtime writes them
 * (src/native/eventpipe/ep-stream.c ep_fast_serializer_write_object, ep-block.c ep_block_fast_serialize and
 * its compressed event header). */
#ifndef MANTRA_TEST_FORMAT_WALK_H
#define MANTRA_TEST_FORMAT_WALK_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/varint-internal.h"

typedef struct tw_block {
    char name[16];
    size_t object_offset;  /* offset of the first 0x05 */
    size_t content_offset; /* after BlockSize and padding */
    uint32_t size;         /* BlockSize */
    uint32_t pad;
} tw_block;

typedef struct tw_trace {
    tw_block *blocks;
    size_t count;
    int end_tag;        /* 0x01 seen right after the last object, at the very end */
    size_t trace_payload; /* offset of the Trace object's 48-byte payload */
    const char *error;  /* NULL when the walk succeeded */
} tw_trace;

static inline uint32_t tw_u32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t tw_u64(const uint8_t *p) { return tw_u32(p) | (uint64_t)tw_u32(p + 4) << 32; }

/* Walks d[0..n). allow_truncated: stop quietly at the end of the last complete object. */
static inline tw_trace tw_walk(const uint8_t *d, size_t n, int allow_truncated) {
    tw_trace t = {NULL, 0, 0, 0, NULL};
    size_t cap = 0, pos = 53;
    static const uint8_t trace_obj[] = {5, 5, 1, 4, 0, 0, 0, 4, 0, 0, 0, 5, 0, 0, 0, 'T', 'r', 'a', 'c', 'e', 6};
    if (n < 102 || memcmp(d, "Nettrace\x14\0\0\0!FastSerialization.1", 32) != 0 ||
        memcmp(d + 32, trace_obj, sizeof trace_obj) != 0 || d[101] != 6) {
        t.error = "bad header or Trace object";
        return t;
    }
    t.trace_payload = pos;
    pos = 102;
    while (pos < n) {
        if (d[pos] == 0x01) {
            t.end_tag = pos + 1 == n;
            if (!t.end_tag)
                t.error = "bytes after the end tag";
            return t;
        }
        if (n - pos < 20 || d[pos] != 5 || d[pos + 1] != 5 || d[pos + 2] != 1 || tw_u32(d + pos + 3) != 2 ||
            tw_u32(d + pos + 7) != 2) {
            if (!allow_truncated)
                t.error = "bad object framing";
            return t;
        }
        uint32_t len = tw_u32(d + pos + 11);
        if (len == 0 || len > 15 || n - pos < 15 + len + 5) {
            if (!allow_truncated || len == 0 || len > 15)
                t.error = "bad name or truncated";
            return t;
        }
        tw_block b;
        memset(&b, 0, sizeof b);
        memcpy(b.name, d + pos + 15, len);
        b.object_offset = pos;
        size_t q = pos + 15 + len;
        if (d[q] != 6) {
            t.error = "type not closed";
            return t;
        }
        b.size = tw_u32(d + q + 1);
        q += 5;
        b.pad = (uint32_t)((4 - (q & 3)) & 3);
        if (n - q < (size_t)b.pad + b.size + 1) {
            if (!allow_truncated)
                t.error = "truncated block";
            return t;
        }
        for (uint32_t i = 0; i < b.pad; i++)
            if (d[q + i] != 0) {
                t.error = "non-zero padding";
                return t;
            }
        b.content_offset = q + b.pad;
        if (d[b.content_offset + b.size] != 6) {
            t.error = "object not closed";
            return t;
        }
        if (t.count == cap) {
            cap = cap ? cap * 2 : 64;
            t.blocks = realloc(t.blocks, cap * sizeof *t.blocks);
        }
        t.blocks[t.count++] = b;
        pos = b.content_offset + b.size + 1;
    }
    if (!allow_truncated)
        t.error = "no end tag";
    return t;
}

static inline size_t tw_count(const tw_trace *t, const char *name) {
    size_t c = 0;
    for (size_t i = 0; i < t->count; i++)
        c += strcmp(t->blocks[i].name, name) == 0;
    return c;
}

/* One decoded row; also the "previous row" state (zero it at each block start). */
typedef struct tw_row {
    uint8_t flags;
    uint32_t metadata_id, sequence, processor, stack_id, payload_size;
    uint64_t capture_thread, thread, timestamp;
    uint8_t activity[16], related[16];
    int sorted;
    const uint8_t *payload;
    size_t header_size;
} tw_row;

/* Decodes the row at c[*pos..end) into *r (which holds the previous row). Returns 0 or -1. */
static inline int tw_next_row(const uint8_t *c, size_t end, size_t *pos, tw_row *r) {
    size_t p = *pos, k;
    uint64_t v;
#define TW_VAR(max)                                        \
    do {                                                   \
        k = cm_varint_get(c + p, end - p, (max), &v); \
        if (k == 0)                                        \
            return -1;                                     \
        p += k;                                            \
    } while (0)
    if (p >= end)
        return -1;
    uint8_t f = c[p++];
    r->flags = f;
    if (f & 0x01) {
        TW_VAR(5);
        r->metadata_id = (uint32_t)v;
    }
    if (f & 0x02) {
        TW_VAR(5);
        r->sequence = r->sequence + (uint32_t)v + 1u;
        TW_VAR(10);
        r->capture_thread = v;
        TW_VAR(5);
        r->processor = (uint32_t)v;
    } else if (r->metadata_id != 0) {
        r->sequence++;
    }
    if (f & 0x04) {
        TW_VAR(10);
        r->thread = v;
    }
    if (f & 0x08) {
        TW_VAR(5);
        r->stack_id = (uint32_t)v;
    }
    TW_VAR(10);
    r->timestamp += v;
    if (f & 0x10) {
        if (end - p < 16)
            return -1;
        memcpy(r->activity, c + p, 16);
        p += 16;
    }
    if (f & 0x20) {
        if (end - p < 16)
            return -1;
        memcpy(r->related, c + p, 16);
        p += 16;
    }
    r->sorted = (f & 0x40) != 0;
    if (f & 0x80) {
        TW_VAR(5);
        r->payload_size = (uint32_t)v;
    }
#undef TW_VAR
    r->header_size = p - *pos;
    if (end - p < r->payload_size)
        return -1;
    r->payload = c + p;
    *pos = p + r->payload_size;
    return 0;
}

#endif
