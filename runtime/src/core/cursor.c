/* Bounds-checked payload cursor used by generated typed readers (mantra/decode.h): the public
 * mantra_cursor_* functions, each the exported form of its inline in cursor-internal.h, which the
 * library's own decoders use. */
#include "cursor-internal.h"

int mantra_cursor_bytes(mantra_cursor *c, size_t n, const uint8_t **out) { return mantra__cursor_bytes(c, n, out); }
int mantra_cursor_u8(mantra_cursor *c, uint8_t *out) { return mantra__cursor_u8(c, out); }
int mantra_cursor_u16(mantra_cursor *c, uint16_t *out) { return mantra__cursor_u16(c, out); }
int mantra_cursor_u32(mantra_cursor *c, uint32_t *out) { return mantra__cursor_u32(c, out); }
int mantra_cursor_u64(mantra_cursor *c, uint64_t *out) { return mantra__cursor_u64(c, out); }
int mantra_cursor_f32(mantra_cursor *c, float *out) { return mantra__cursor_f32(c, out); }
int mantra_cursor_f64(mantra_cursor *c, double *out) { return mantra__cursor_f64(c, out); }
int mantra_cursor_guid(mantra_cursor *c, mantra_guid *out) { return mantra__cursor_guid(c, out); }
int mantra_cursor_str16(mantra_cursor *c, mantra_str16 *out) { return mantra__cursor_str16(c, out); }
int mantra_cursor_str8(mantra_cursor *c, mantra_str8 *out) { return mantra__cursor_str8(c, out); }

int mantra_cursor_align(mantra_cursor *c, size_t start, size_t align) { return mantra__cursor_align(c, start, align); }

int mantra_cursor_array(mantra_cursor *c, uint64_t count, size_t elem_size, mantra_array *out) {
    return mantra__cursor_array(c, count, elem_size, out);
}

int mantra_cursor_pointer(mantra_cursor *c, uint64_t *out) {
    if (c->pointer_size == 4) {
        uint32_t v;
        MANTRA_TRY(mantra__cursor_u32(c, &v));
        *out = v;
        return MANTRA_DECODE_OK;
    }
    return mantra__cursor_u64(c, out);
}

int mantra_cursor_finish(const mantra_cursor *c) {
    return c->pos == c->size ? MANTRA_DECODE_OK : MANTRA_DECODE_TRAILING;
}
