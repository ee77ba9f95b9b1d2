/* Bounds-checked payload cursor used by generated typed readers (mantra/decode.h). */
#include <string.h>

#include "mantra/decode.h"

int mantra_cursor_bytes(mantra_cursor *c, size_t n, const uint8_t **out) {
    if (n > c->size - c->pos)
        return MANTRA_DECODE_SHORT;
    *out = c->data + c->pos;
    c->pos += n;
    return MANTRA_DECODE_OK;
}

int mantra_cursor_u8(mantra_cursor *c, uint8_t *out) {
    const uint8_t *p;
    MANTRA_TRY(mantra_cursor_bytes(c, 1, &p));
    *out = p[0];
    return MANTRA_DECODE_OK;
}

int mantra_cursor_u16(mantra_cursor *c, uint16_t *out) {
    const uint8_t *p;
    MANTRA_TRY(mantra_cursor_bytes(c, 2, &p));
    *out = mantra_load_u16(p);
    return MANTRA_DECODE_OK;
}

int mantra_cursor_u32(mantra_cursor *c, uint32_t *out) {
    const uint8_t *p;
    MANTRA_TRY(mantra_cursor_bytes(c, 4, &p));
    *out = mantra_load_u32(p);
    return MANTRA_DECODE_OK;
}

int mantra_cursor_u64(mantra_cursor *c, uint64_t *out) {
    const uint8_t *p;
    MANTRA_TRY(mantra_cursor_bytes(c, 8, &p));
    *out = mantra_load_u64(p);
    return MANTRA_DECODE_OK;
}

int mantra_cursor_pointer(mantra_cursor *c, uint64_t *out) {
    if (c->pointer_size == 4) {
        uint32_t v;
        MANTRA_TRY(mantra_cursor_u32(c, &v));
        *out = v;
        return MANTRA_DECODE_OK;
    }
    return mantra_cursor_u64(c, out);
}

int mantra_cursor_f32(mantra_cursor *c, float *out) {
    const uint8_t *p;
    MANTRA_TRY(mantra_cursor_bytes(c, 4, &p));
    memcpy(out, p, 4);
    return MANTRA_DECODE_OK;
}

int mantra_cursor_f64(mantra_cursor *c, double *out) {
    const uint8_t *p;
    MANTRA_TRY(mantra_cursor_bytes(c, 8, &p));
    memcpy(out, p, 8);
    return MANTRA_DECODE_OK;
}

int mantra_cursor_guid(mantra_cursor *c, mantra_guid *out) {
    const uint8_t *p;
    MANTRA_TRY(mantra_cursor_bytes(c, 16, &p));
    out->data1 = mantra_load_u32(p);
    out->data2 = mantra_load_u16(p + 4);
    out->data3 = mantra_load_u16(p + 6);
    memcpy(out->data4, p + 8, 8);
    return MANTRA_DECODE_OK;
}

int mantra_cursor_str16(mantra_cursor *c, mantra_str16 *out) {
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

int mantra_cursor_str8(mantra_cursor *c, mantra_str8 *out) {
    const uint8_t *start = c->data + c->pos;
    const uint8_t *nul = memchr(start, 0, c->size - c->pos);
    if (nul == NULL)
        return MANTRA_DECODE_BAD_STRING;
    out->data = (const char *)start;
    out->len = (size_t)(nul - start);
    c->pos += out->len + 1;
    return MANTRA_DECODE_OK;
}

int mantra_cursor_array(mantra_cursor *c, uint64_t count, size_t elem_size, mantra_array *out) {
    size_t left = c->size - c->pos;
    if (elem_size != 0 && count > left / elem_size)
        return MANTRA_DECODE_SHORT;
    out->data = c->data + c->pos;
    out->count = (size_t)count;
    c->pos += (size_t)count * elem_size;
    return MANTRA_DECODE_OK;
}

int mantra_cursor_finish(const mantra_cursor *c) {
    return c->pos == c->size ? MANTRA_DECODE_OK : MANTRA_DECODE_TRAILING;
}
