/* cursor-internal.h - the reads of the one payload cursor (mantra_cursor, mantra/decode.h) as static
 * inline functions: core/cursor.c exports them as the public mantra_cursor_* functions used by
 * generated decoders, and the library's own decoders (the reader's metadata-driven field decoding and
 * its metadata parser) call them directly so that the per-field path stays inline. Also what only
 * those need: varints and the bytes left. Each read returns MANTRA_DECODE_OK, or a negative enum
 * mantra_decode_status and leaves the cursor where it was. Private (prefix mantra__: used across
 * folders). */
#ifndef MANTRA_CURSOR_INTERNAL_H
#define MANTRA_CURSOR_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/le-internal.h"
#include "common/varint-internal.h"
#include "mantra/decode.h"

/* Bytes between the position and the end. */
static inline size_t mantra__cursor_left(const mantra_cursor *c) { return c->size - c->pos; }

static inline int mantra__cursor_bytes(mantra_cursor *c, size_t n, const uint8_t **out) {
    if (n > c->size - c->pos)
        return MANTRA_DECODE_SHORT;
    *out = c->data + c->pos;
    c->pos += n;
    return MANTRA_DECODE_OK;
}

/* Skips to the next offset from start that is a multiple of align (C struct padding). */
static inline int mantra__cursor_align(mantra_cursor *c, size_t start, size_t align) {
    if (align > 1 && c->pos >= start) {
        size_t rem = (c->pos - start) % align;
        if (rem != 0) {
            const uint8_t *unused;
            return mantra__cursor_bytes(c, align - rem, &unused);
        }
    }
    return MANTRA_DECODE_OK;
}

static inline int mantra__cursor_u8(mantra_cursor *c, uint8_t *out) {
    const uint8_t *p;
    MANTRA_TRY(mantra__cursor_bytes(c, 1, &p));
    *out = p[0];
    return MANTRA_DECODE_OK;
}

static inline int mantra__cursor_u16(mantra_cursor *c, uint16_t *out) {
    const uint8_t *p;
    MANTRA_TRY(mantra__cursor_bytes(c, 2, &p));
    *out = mantra_load_u16(p);
    return MANTRA_DECODE_OK;
}

static inline int mantra__cursor_u32(mantra_cursor *c, uint32_t *out) {
    const uint8_t *p;
    MANTRA_TRY(mantra__cursor_bytes(c, 4, &p));
    *out = mantra_load_u32(p);
    return MANTRA_DECODE_OK;
}

static inline int mantra__cursor_u64(mantra_cursor *c, uint64_t *out) {
    const uint8_t *p;
    MANTRA_TRY(mantra__cursor_bytes(c, 8, &p));
    *out = mantra_load_u64(p);
    return MANTRA_DECODE_OK;
}

static inline int mantra__cursor_f32(mantra_cursor *c, float *out) {
    const uint8_t *p;
    MANTRA_TRY(mantra__cursor_bytes(c, 4, &p));
    memcpy(out, p, 4);
    return MANTRA_DECODE_OK;
}

static inline int mantra__cursor_f64(mantra_cursor *c, double *out) {
    const uint8_t *p;
    MANTRA_TRY(mantra__cursor_bytes(c, 8, &p));
    memcpy(out, p, 8);
    return MANTRA_DECODE_OK;
}

static inline int mantra__cursor_guid(mantra_cursor *c, mantra_guid *out) {
    const uint8_t *p;
    MANTRA_TRY(mantra__cursor_bytes(c, 16, &p));
    cm_load_guid(out, p);
    return MANTRA_DECODE_OK;
}

/* A NUL-terminated UTF-16LE string (code units counted from the position). */
static inline int mantra__cursor_str16(mantra_cursor *c, mantra_str16 *out) {
    for (size_t i = c->pos; i + 1 < c->size; i += 2) {
        if (c->data[i] == 0 && c->data[i + 1] == 0) {
            out->data = c->data + c->pos;
            out->units = (i - c->pos) / 2;
            c->pos = i + 2;
            return MANTRA_DECODE_OK;
        }
    }
    return MANTRA_DECODE_BAD_STRING;
}

/* A NUL-terminated UTF-8 string. */
static inline int mantra__cursor_str8(mantra_cursor *c, mantra_str8 *out) {
    const uint8_t *start = c->data + c->pos;
    const uint8_t *nul = memchr(start, 0, c->size - c->pos);
    if (nul == NULL)
        return MANTRA_DECODE_BAD_STRING;
    out->data = (const char *)start;
    out->len = (size_t)(nul - start);
    c->pos += out->len + 1;
    return MANTRA_DECODE_OK;
}

/* count elements of elem_size bytes each (overflow-checked). */
static inline int mantra__cursor_array(mantra_cursor *c, uint64_t count, size_t elem_size, mantra_array *out) {
    size_t left = c->size - c->pos;
    if (elem_size != 0 && count > left / elem_size)
        return MANTRA_DECODE_SHORT;
    out->data = c->data + c->pos;
    out->count = (size_t)count;
    c->pos += (size_t)count * elem_size;
    return MANTRA_DECODE_OK;
}

/* An unsigned LEB128 varint of at most max_bytes groups (CM_VARINT32_MAX_BYTES or
 * CM_VARINT64_MAX_BYTES): MANTRA_DECODE_SHORT when the payload ends first or the value is longer. */
static inline int mantra__cursor_varint(mantra_cursor *c, size_t max_bytes, uint64_t *out) {
    size_t k = cm_varint_get(c->data + c->pos, c->size - c->pos, max_bytes, out);
    if (k == 0)
        return MANTRA_DECODE_SHORT;
    c->pos += k;
    return MANTRA_DECODE_OK;
}

#endif
