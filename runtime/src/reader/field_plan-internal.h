/* Decoding plans (field_plan.c): the top-level fields of one metadata record compiled once, when
 * the record is defined, into a flat list of steps (the load of a fixed-size scalar, a UTF-16
 * string, a varint; anything nested handed to the walking decoder of field_decode.c), so that
 * decoding an event does not walk the type description again. Values, order, offsets and results
 * are exactly those of mantra_decode_payload() over the same fields. Private to the reader. */
#ifndef MANTRA_FIELD_PLAN_INTERNAL_H
#define MANTRA_FIELD_PLAN_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "common/arena-internal.h"
#include "common/le-internal.h"
#include "mantra/reader.h"
#if defined(__GNUC__) && defined(__SSE2__)
#include <emmintrin.h>
#endif

typedef struct mantra_field_plan mantra_field_plan;

/* The head of every plan (field_plan.c): what rd_plan_check_note notes, written by the reader's
 * inline event path (reader-internal.h, rd_event_decode_status) and read by rd_plan_decode. */
typedef struct rd_plan_head rd_plan_head;
struct rd_plan_head {
    const uint8_t *exact_payload; /* the payload last found to hold the fields exactly, or NULL */
    size_t exact_size;
    int last_str;       /* the last field is a string (else a note is never used) */
    rd_plan_head *next; /* the reader's list of its plans (rd_plan_forget_notes) */
    /* the two layouts most events with variable fields have, checked inline by rd_plan_check_note
     * (rd_plan_check's loop and call cost as much as the check itself for them): RD_SHAPE_STR_END,
     * fixed-size fields of prefix bytes (maybe none) and then one UTF-16 string;
     * RD_SHAPE_ARRAY_END, fixed-size fields of prefix bytes and then one UInt16-counted array of
     * elements of esize bytes. RD_SHAPE_OTHER for every other layout. */
    uint8_t shape;
    uint8_t esize;
    uint32_t prefix;
};

enum { RD_SHAPE_OTHER, RD_SHAPE_STR_END, RD_SHAPE_ARRAY_END };

/* The plan for fields[0..count) (allocated in a), or NULL when out of memory or count is 0; linked
 * into *plans (the reader's list, for rd_plan_forget_notes) when plans is not NULL. */
const mantra_field_plan *rd_plan_build(cm_arena *a, const mantra_field_desc *fields, uint32_t count,
                                       rd_plan_head **plans);
/* Forgets the notes of every plan of the list (rd_plan_check_note): the reader calls it whenever
 * it moves its input buffer, so that memory handed out again elsewhere is never taken for bytes it
 * checked (the plans go with the reader's arena when it frees the buffer for good). */
void rd_plan_forget_notes(rd_plan_head *plans);
/* mantra_decode_payload(fields, count, payload, size, ..., visitor, ctx) through the plan: the same
 * calls of the visitor and the same result. */
int rd_plan_decode(const mantra_field_plan *plan, const uint8_t *payload, size_t size,
                   const mantra_field_visitor *visitor, void *ctx);
/* The same without a visitor: 0 when the payload holds the fields exactly, 1 when bytes remain, a
 * negative MANTRA_E* code when it ends inside a field or holds a bad value. */
int rd_plan_check(const mantra_field_plan *plan, const uint8_t *payload, size_t size);
/* The end of the UTF-16LE string at pos of p[0..size) (the offset after its
 * terminator, the first 0 code unit from pos in steps of 2), or 0 when the payload ends first. */
static inline size_t rd_str16_end(const uint8_t *p, size_t size, size_t pos) {
    size_t i = pos;
#if defined(__GNUC__) && defined(__SSE2__)
    /* eight code units at a time where SSE2 is there (every x86-64): the 16-bit lanes equal to 0,
     * two mask bits each; the window steps keep lanes on code units (i - pos stays even), and the
     * last window overlaps units already seen, as below */
    if (size - pos >= 16) {
        const __m128i zero = _mm_setzero_si128();
        const size_t last = pos + ((size - pos) & ~(size_t)1) - 16;
        unsigned m;
        for (; i < last; i += 16) {
            m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi16(_mm_loadu_si128((const __m128i *)(const void *)(p + i)), zero));
            if (m != 0)
                return i + (size_t)__builtin_ctz(m) + 2;
        }
        m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi16(_mm_loadu_si128((const __m128i *)(const void *)(p + last)), zero));
        return m != 0 ? last + (size_t)__builtin_ctz(m) + 2 : 0;
    }
#endif
#if defined(__GNUC__)
    /* four code units at a time: a unit is 0 when its 16-bit lane of the little-endian word is 0
     * (the classic has-zero test, per 16-bit lane: a zero lane is always flagged, and a borrow
     * only flags lanes above a zero one, so the lowest flagged lane is the first zero unit). The
     * last window ends at the payload's last whole unit and may overlap units already seen, none
     * of them 0 (their window flagged nothing): no unit-by-unit tail for strings that end the
     * payload, as most do. */
    if (size - pos >= 8) {
        const uint64_t lo = UINT64_C(0x0001000100010001), hi = UINT64_C(0x8000800080008000);
        const size_t last = pos + ((size - pos) & ~(size_t)1) - 8;
        uint64_t x, z;
        for (; i < last; i += 8) {
            x = mantra_load_u64(p + i);
            z = (x - lo) & ~x & hi;
            if (z != 0)
                return i + 2 * ((size_t)__builtin_ctzll(z) / 16) + 2;
        }
        x = mantra_load_u64(p + last);
        z = (x - lo) & ~x & hi;
        return z != 0 ? last + 2 * ((size_t)__builtin_ctzll(z) / 16) + 2 : 0;
    }
#endif
    for (; i + 1 < size; i += 2)
        if (p[i] == 0 && p[i + 1] == 0)
            return i + 2;
    return 0;
}

/* The end of the UInt16-counted array of esize-byte elements at pos of p[0..size) (pos <= size),
 * or 0 when the payload ends first: rd_plan_check's step and rd_plan_check_note's inline layout. A
 * multiplication, not a division: at most 65535 elements of at most 16 bytes. */
static inline size_t rd_array16_end(const uint8_t *p, size_t size, size_t pos, size_t esize) {
    if (size - pos < 2)
        return 0;
    uint64_t bytes = (uint64_t)mantra_load_u16(p + pos) * esize;
    return bytes > size - pos - 2 ? 0 : pos + 2 + (size_t)bytes;
}

/* What rd_plan_check finds for a string at pos that should end p[0..size): 0 when its terminator
 * is the payload's last code unit, 1 when an earlier one ends it (bytes remain), MANTRA_EFORMAT when
 * none does; that is, rd_str16_end(p, size, pos) == 0 ? MANTRA_EFORMAT : its result < size. Where
 * SSE2 is there and the units before the last take 64 bytes or fewer, without a loop: four 16-byte
 * windows inside [pos, last unit) that together cover it (for fewer than 16 bytes, one window that
 * ends at the last unit, the bits before pos masked off), so that the only branches are on the
 * payload's shape and not on where a terminator is. */
static inline int rd_str16_tail_check(const uint8_t *p, size_t size, size_t pos) {
#if defined(__GNUC__) && defined(__SSE2__)
    if (size >= 18 && pos <= size - 2) {
        const size_t end = size - 2, len = end - pos; /* the last unit's offset; bytes before it */
        if (len <= 64 && (len & 1) == 0) {
            /* every window starts an even number of bytes from pos: its lanes are code units */
            const __m128i zero = _mm_setzero_si128();
            const size_t last = end - 16;
            const int short_str = len < 16;
            const size_t w0 = short_str ? last : pos;
            const size_t w1 = short_str || pos + 16 > last ? last : pos + 16;
            const size_t w2 = short_str || pos + 32 > last ? last : pos + 32;
            const unsigned keep = 0xFFFFu << (short_str ? 16 - len : 0);
#define RD_ZERO_UNITS(at) ((unsigned)_mm_movemask_epi8(_mm_cmpeq_epi16(_mm_loadu_si128((const __m128i *)(const void *)(p + (at))), zero)))
            unsigned m = RD_ZERO_UNITS(w0) | RD_ZERO_UNITS(w1) | RD_ZERO_UNITS(w2) | RD_ZERO_UNITS(last);
#undef RD_ZERO_UNITS
            if ((m & keep) != 0)
                return 1;
            return mantra_load_u16(p + end) == 0 ? 0 : MANTRA_EFORMAT;
        }
    }
#endif
    size_t e = pos <= size ? rd_str16_end(p, size, pos) : 0;
    return e == 0 ? MANTRA_EFORMAT : e < size;
}

/* rd_plan_check for the event the reader is about to deliver, noting in the plan's head whether
 * payload[0..size) holds the fields exactly. A decode of that same payload (same address and size)
 * then takes the end of a string that is the last field to be the payload's end instead of
 * searching for it again (rd_plan_decode). The note is replaced by the next check through this
 * plan (and cleared when that check does not find the fields exactly), so it always describes the
 * bytes last checked at that address; rd_plan_forget_notes clears it when the reader's input buffer
 * moves. The plan belongs to the reader that checks through it (allocated writable in
 * its arena). */
static inline int rd_plan_check_note(const mantra_field_plan *plan, const uint8_t *payload, size_t size) {
    rd_plan_head *h = (rd_plan_head *)(uintptr_t)plan;
    int rc;
    /* the inline layouts give exactly rd_plan_check's result (check_common's steps, in order) */
    if (h->shape == RD_SHAPE_STR_END) {
        rc = rd_str16_tail_check(payload, size, h->prefix);
    } else if (h->shape == RD_SHAPE_ARRAY_END) {
        size_t e = size >= h->prefix ? rd_array16_end(payload, size, h->prefix, h->esize) : 0;
        rc = e == 0 ? MANTRA_EFORMAT : e < size;
    } else {
        rc = rd_plan_check(plan, payload, size);
    }
    h->exact_payload = rc == 0 ? payload : NULL;
    h->exact_size = size;
    return rc;
}

/* field_decode.c: decodes the one field f at *pos of payload[0..size) at depth 0 with the walking
 * decoder (mantra_decode_payload's step for one top-level field); *pos moves past it. */
int rd_decode_one_field(const mantra_field_desc *f, const uint8_t *payload, size_t size, size_t *pos,
                        const mantra_field_visitor *visitor, void *ctx);

#endif
