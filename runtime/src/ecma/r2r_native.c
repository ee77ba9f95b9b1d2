/* r2r_native.c - the primitives of ReadyToRun's native format (ecma-internal.h): its variable-length
 * integers, NativeArray and NativeHashtable, as dotnet/runtime's NativeFormatReader (NativeReader.
 * DecodeUnsigned/DecodeSigned, NativeArray, NativeHashtable) reads them and ../shared/reference/
 * r2r-and-symbols.md §2.4-2.5 describes them. */
#include <inttypes.h>

#include "ecma-internal.h"
#include "mantra/decode.h"

/* The low bits of the first byte give the length: x0 1 byte, 01 2, 011 3, 0111 4, 1111 5 (the
 * value in the next 4 bytes). */
static uint32_t native_raw(const uint8_t *p, size_t left, uint32_t *raw, unsigned *shift) {
    if (left == 0)
        return 0;
    if ((p[0] & 1) == 0) {
        *raw = p[0];
        *shift = 1;
        return 1;
    }
    if ((p[0] & 2) == 0) {
        if (left < 2)
            return 0;
        *raw = (uint32_t)p[0] | (uint32_t)p[1] << 8;
        *shift = 2;
        return 2;
    }
    if ((p[0] & 4) == 0) {
        if (left < 3)
            return 0;
        *raw = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;
        *shift = 3;
        return 3;
    }
    if ((p[0] & 8) == 0) {
        if (left < 4)
            return 0;
        *raw = mantra_load_u32(p);
        *shift = 4;
        return 4;
    }
    if (left < 5)
        return 0;
    *raw = mantra_load_u32(p + 1);
    *shift = 0;
    return 5;
}

uint32_t ec_native_uint(const uint8_t *p, size_t left, uint32_t *v) {
    uint32_t raw;
    unsigned shift;
    uint32_t n = native_raw(p, left, &raw, &shift);
    if (n)
        *v = raw >> shift;
    return n;
}

uint32_t ec_native_int(const uint8_t *p, size_t left, int32_t *v) {
    uint32_t raw;
    unsigned shift;
    uint32_t n = native_raw(p, left, &raw, &shift);
    if (n == 0)
        return 0;
    if (shift == 0) {
        *v = (int32_t)raw;
        return n;
    }
    /* sign-extend the value's width (8 * n bits), then drop the length bits */
    unsigned width = 8 * n;
    int64_t x = (int64_t)raw;
    if (raw >> (width - 1) & 1)
        x -= (int64_t)1 << width;
    *v = (int32_t)(x / ((int64_t)1 << shift) - (x < 0 && x % ((int64_t)1 << shift) != 0));
    return n;
}

int64_t ec_native_array_get(const uint8_t *blob, uint32_t size, uint32_t i, uint32_t *count) {
    uint32_t v, n = ec_native_uint(blob, size, &v);
    if (n == 0)
        return -1;
    uint32_t nitems = v >> 2, es = (v & 3) == 0 ? 1 : (v & 3) == 1 ? 2 : 4, base = n;
    if (count)
        *count = nitems;
    if (i >= nitems)
        return 0;
    uint64_t idx_at = (uint64_t)base + (uint64_t)es * (i / 16);
    if (idx_at + es > size)
        return -1;
    const uint8_t *e = blob + idx_at;
    uint64_t off = base + (uint64_t)(es == 1 ? e[0] : es == 2 ? mantra_load_u16(e) : mantra_load_u32(e));
    /* the block's tree, bits 8, 4, 2, 1 of the index; a leaf (low bits 00) holds the index it is for */
    for (uint32_t bit = 8; bit > 0; bit >>= 1) {
        uint32_t val;
        if (off >= size)
            return -1;
        uint32_t k = ec_native_uint(blob + off, (size_t)(size - off), &val);
        if (k == 0)
            return -1;
        uint64_t next = off + k;
        if ((i & bit) && (val & 2)) {
            off += val >> 2;
            continue;
        }
        if (!(i & bit) && (val & 1)) {
            off = next;
            continue;
        }
        if ((val & 3) == 0 && (val >> 2) == (i & 15))
            return (int64_t)next;
        return 0;
    }
    return (int64_t)off;
}

int ec_native_hashtable_each(const uint8_t *blob, uint32_t size, uint64_t at, const char *what,
                             int (*fn)(void *ctx, uint32_t entry), void *ctx, mantra_ecma_error *err) {
    if (size == 0)
        return ec_fail(err, at, "%s: an empty NativeHashtable (no header)", what);
    uint8_t head = blob[0];
    uint32_t log2 = head >> 2, es = (head & 3) == 0 ? 1 : (head & 3) == 1 ? 2 : 4;
    if (log2 > 24 || 1 + ((uint64_t)1 << log2) * es + es > size)
        return ec_fail(err, at, "%s: %u buckets run past the section (%u bytes)", what, 1u << (log2 > 24 ? 24 : log2),
                       size);
    uint32_t buckets = 1u << log2;
    /* bucket offsets are relative to the byte after the header; a bucket runs to the next one */
    for (uint32_t b = 0; b < buckets; b++) {
        const uint8_t *e = blob + 1 + (size_t)b * es;
        uint64_t start = 1 + (uint64_t)(es == 1 ? e[0] : es == 2 ? mantra_load_u16(e) : mantra_load_u32(e));
        e += es;
        uint64_t end = 1 + (uint64_t)(es == 1 ? e[0] : es == 2 ? mantra_load_u16(e) : mantra_load_u32(e));
        if (end > size || start > end)
            return ec_fail(err, at + 1 + (uint64_t)b * es, "%s: bucket %u (%" PRIu64 "..%" PRIu64 ") is outside the section",
                           what, b, start, end);
        for (uint64_t p = start; p < end;) {
            int32_t rel = 0; /* the low byte of the hash, then a signed offset from the offset field itself */
            uint32_t k = p + 1 < end ? ec_native_int(blob + p + 1, (size_t)(end - p - 1), &rel) : 0;
            int64_t entry = (int64_t)p + 1 + rel;
            if (k == 0 || entry < 0 || entry >= (int64_t)size)
                return ec_fail(err, at + p, "%s: an entry of bucket %u runs past the section or points outside it", what, b);
            int rc = fn(ctx, (uint32_t)entry);
            if (rc)
                return rc;
            p += 1 + k;
        }
    }
    return MANTRA_OK;
}
