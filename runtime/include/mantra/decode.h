/* mantra/decode.h - views and helpers used by generated typed readers.
 *
 * Generated decoders (`mantra_<Prefix>_<Symbol>_decode`) fill a struct of plain values for fixed-size
 * fields and of views into the payload for strings, binaries, arrays and structs. Views stay valid as
 * long as the payload buffer does. Payload integers are little-endian and unaligned; the accessors
 * below read them safely.
 */
#ifndef MANTRA_DECODE_H
#define MANTRA_DECODE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mantra/event.h"

MANTRA_BEGIN_DECLS

/* Decoder results. */
enum mantra_decode_status {
    MANTRA_DECODE_OK = 0,
    MANTRA_DECODE_TRAILING = 1,   /* every field decoded; bytes remain after the last field */
    MANTRA_DECODE_SHORT = -1,     /* the payload ends before a field does */
    MANTRA_DECODE_BAD_STRING = -2 /* a string has no terminator inside the payload */
};

/* A UTF-16LE string in the payload, without its terminator. `units` counts 16-bit code units. */
typedef struct mantra_str16 {
    const uint8_t *data;
    size_t units;
} mantra_str16;

/* A UTF-8 (AnsiString) string in the payload, without its terminator. */
typedef struct mantra_str8 {
    const char *data;
    size_t len;
} mantra_str8;

/* Raw bytes (Binary fields, and whole struct arrays: `count` elements in `size` bytes). */
typedef struct mantra_bytes {
    const uint8_t *data;
    size_t size;
    size_t count;
} mantra_bytes;

/* A counted array of fixed-size scalars. Read element i with the mantra_array_* accessors. */
typedef struct mantra_array {
    const uint8_t *data;
    size_t count;
} mantra_array;

static inline uint16_t mantra_load_u16(const uint8_t *p) { uint16_t v; memcpy(&v, p, sizeof v); return v; }
static inline uint32_t mantra_load_u32(const uint8_t *p) { uint32_t v; memcpy(&v, p, sizeof v); return v; }
static inline uint64_t mantra_load_u64(const uint8_t *p) { uint64_t v; memcpy(&v, p, sizeof v); return v; }

static inline uint8_t mantra_array_u8(mantra_array a, size_t i) { return a.data[i]; }
static inline int8_t mantra_array_i8(mantra_array a, size_t i) { return (int8_t)a.data[i]; }
static inline uint16_t mantra_array_u16(mantra_array a, size_t i) { return mantra_load_u16(a.data + 2 * i); }
static inline int16_t mantra_array_i16(mantra_array a, size_t i) { return (int16_t)mantra_load_u16(a.data + 2 * i); }
static inline uint32_t mantra_array_u32(mantra_array a, size_t i) { return mantra_load_u32(a.data + 4 * i); }
static inline int32_t mantra_array_i32(mantra_array a, size_t i) { return (int32_t)mantra_load_u32(a.data + 4 * i); }
static inline uint64_t mantra_array_u64(mantra_array a, size_t i) { return mantra_load_u64(a.data + 8 * i); }
static inline int64_t mantra_array_i64(mantra_array a, size_t i) { return (int64_t)mantra_load_u64(a.data + 8 * i); }
static inline float mantra_array_f32(mantra_array a, size_t i) { float v; memcpy(&v, a.data + 4 * i, sizeof v); return v; }
static inline double mantra_array_f64(mantra_array a, size_t i) { double v; memcpy(&v, a.data + 8 * i, sizeof v); return v; }

/* Code unit i of a UTF-16 view. */
static inline uint16_t mantra_str16_at(mantra_str16 s, size_t i) { return mantra_load_u16(s.data + 2 * i); }

/* Converts a UTF-16 view to NUL-terminated UTF-8 in out[0..out_size). Unpaired surrogates become
 * U+FFFD. Returns the length the full conversion needs (excluding the NUL); the output is truncated
 * (at a character boundary) when that is >= out_size. */
size_t mantra_str16_to_utf8(mantra_str16 s, char *out, size_t out_size);

/* Compares a UTF-16 view with a UTF-8 string: 1 when they hold the same characters. */
int mantra_str16_equals_utf8(mantra_str16 s, const char *utf8);

/* Decodes one UTF-8 scalar value at s[0..n): returns its length in bytes (1..4) and stores the code
 * point in *cp, or returns 0 when the bytes are not valid UTF-8 there (overlong, surrogate, above
 * U+10FFFF, truncated). */
size_t mantra_utf8_decode(const uint8_t *s, size_t n, uint32_t *cp);

/* Decoder cursor: the generated decoders use these; they are public so that hand-written
 * decoders behave the same. Each returns 0 or a negative enum mantra_decode_status and
 * advances *pos. */
typedef struct mantra_cursor {
    const uint8_t *data;
    size_t size;
    size_t pos;
    unsigned pointer_size; /* 4 or 8: the trace's pointer size */
} mantra_cursor;

int mantra_cursor_bytes(mantra_cursor *c, size_t n, const uint8_t **out);
int mantra_cursor_u8(mantra_cursor *c, uint8_t *out);
int mantra_cursor_u16(mantra_cursor *c, uint16_t *out);
int mantra_cursor_u32(mantra_cursor *c, uint32_t *out);
int mantra_cursor_u64(mantra_cursor *c, uint64_t *out);
int mantra_cursor_pointer(mantra_cursor *c, uint64_t *out);
int mantra_cursor_f32(mantra_cursor *c, float *out);
int mantra_cursor_f64(mantra_cursor *c, double *out);
int mantra_cursor_guid(mantra_cursor *c, mantra_guid *out);
int mantra_cursor_str16(mantra_cursor *c, mantra_str16 *out);
int mantra_cursor_str8(mantra_cursor *c, mantra_str8 *out);
/* Skips the padding a C compiler puts before a member of alignment align in a struct that starts
 * at offset start: to the next multiple of align from start (MANTRA_DECODE_SHORT when the payload
 * ends first). The readers of a struct with `layout: c` call it before each member and at the end
 * of each element (docs/manifest.md). */
int mantra_cursor_align(mantra_cursor *c, size_t start, size_t align);
/* count elements of elem_size bytes each (overflow-checked). */
int mantra_cursor_array(mantra_cursor *c, uint64_t count, size_t elem_size, mantra_array *out);
/* Returns from the enclosing function when a cursor call fails. */
#define MANTRA_TRY(call)               \
    do {                               \
        int mantra_rc_ = (call);       \
        if (mantra_rc_ < 0)            \
            return mantra_rc_;         \
    } while (0)

/* A cursor over a view (for walking struct arrays element by element). */
static inline mantra_cursor mantra_cursor_of(mantra_bytes b, unsigned pointer_size) {
    mantra_cursor c;
    c.data = b.data;
    c.size = b.size;
    c.pos = 0;
    c.pointer_size = pointer_size;
    return c;
}

/* Final status: MANTRA_DECODE_OK, or MANTRA_DECODE_TRAILING when bytes remain. */
int mantra_cursor_finish(const mantra_cursor *c);

MANTRA_END_DECLS

#endif /* MANTRA_DECODE_H */
