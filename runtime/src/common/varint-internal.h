/* Unsigned LEB128 varints as nettrace uses them (dotnet/runtime src/native/eventpipe/ep-block.c
 * writes them into compressed row headers; microsoft/perfview src/TraceEvent/EventPipe/
 * EventPipeEventSource.cs ReadFromFormatV4 reads them: 7 bits per byte, low
 * group first, bit 7 = continuation; TraceEvent accepts at most 5 groups for 32-bit values and 10
 * for 64-bit ones), and V6's zig-zag signed form (microsoft/perfview NetTraceFormat.md, the V6
 * VarInt type). Shared by the writer and the reader. */
#ifndef MANTRA_VARINT_INTERNAL_H
#define MANTRA_VARINT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#define CM_VARINT32_MAX_BYTES 5
#define CM_VARINT64_MAX_BYTES 10

/* Writes v at out (room for CM_VARINT64_MAX_BYTES); returns the number of bytes written. */
static inline size_t cm_varint_put(uint8_t *out, uint64_t v) {
    size_t n = 0;
    while (v >= 0x80) {
        out[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    out[n++] = (uint8_t)v;
    return n;
}

/* Bytes cm_varint_put() would write for v. */
static inline size_t cm_varint_size(uint64_t v) {
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

/* Reads a varint of at most max_bytes groups from p[0..size). Returns the bytes consumed, or 0 when
 * the input ends first or the value has more than max_bytes groups (or overflows 64 bits). */
static inline size_t cm_varint_get(const uint8_t *p, size_t size, size_t max_bytes, uint64_t *v) {
    uint64_t r = 0;
    for (size_t i = 0; i < size && i < max_bytes; i++) {
        uint8_t b = p[i];
        if (i == 9 && (b & 0x7e) != 0)
            return 0; /* more than 64 bits */
        r |= (uint64_t)(b & 0x7f) << (7 * i);
        if ((b & 0x80) == 0) {
            *v = r;
            return i + 1;
        }
    }
    return 0;
}

static inline uint64_t cm_zigzag_encode(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static inline int64_t cm_zigzag_decode(uint64_t u) { return (int64_t)(u >> 1) ^ -(int64_t)(u & 1); }

#endif
