/* The compressed signed 64-bit integers of the PgoFormat stream (mantra/pgo.h). Facts: dotnet/
 * runtime src/coreclr/inc/pgo_formatprocessing.h (WriteCompressedIntToBytes, ReadCompressedInts)
 * and src/coreclr/tools/Common/Pgo/PgoFormat.cs (PgoEncodedCompressedLongGenerator,
 * PgoEncodedCompressedIntParser): a CorSig-like code widened to 64 bits, multi-byte forms
 * big-endian. */
#include "pgo-internal.h"

/* The smallest form whose signed range holds v: 7 bits (1 byte), 14 bits (2), 32 bits (5), 64 (9). */
size_t mantra_pgo_int_size(int64_t v) {
    if (v >= -64 && v <= 63)
        return 1;
    if (v >= -8192 && v <= 8191)
        return 2;
    if (v >= INT32_MIN && v <= INT32_MAX)
        return 5;
    return 9;
}

size_t mantra_pgo_int_encode(int64_t v, uint8_t *out) {
    uint64_t u = (uint64_t)v;
    unsigned sign = v < 0 ? 1u : 0u;
    switch (mantra_pgo_int_size(v)) {
    case 1:
        out[0] = (uint8_t)(((u & 0x3F) << 1) | sign);
        return 1;
    case 2: {
        uint32_t d = (uint32_t)(((u & 0x1FFF) << 1) | sign);
        out[0] = (uint8_t)(0x80 | (d >> 8));
        out[1] = (uint8_t)(d & 0xFF);
        return 2;
    }
    case 5:
        out[0] = 0xC0;
        for (int i = 0; i < 4; i++)
            out[1 + i] = (uint8_t)(u >> (24 - 8 * i));
        return 5;
    default:
        out[0] = 0xC1;
        for (int i = 0; i < 8; i++)
            out[1 + i] = (uint8_t)(u >> (56 - 8 * i));
        return 9;
    }
}

int mantra_pgo_int_decode(const uint8_t *p, size_t size, int64_t *v) {
    if (size == 0)
        return MANTRA_ETRUNCATED;
    uint8_t b = p[0];
    if ((b & 0x80) == 0) {
        uint64_t u = (uint64_t)(b >> 1);
        if (b & 1)
            u |= ~UINT64_C(0x3F); /* ...FFC0 */
        *v = (int64_t)u;
        return 1;
    }
    if ((b & 0xC0) == 0x80) {
        if (size < 2)
            return MANTRA_ETRUNCATED;
        uint32_t s = ((uint32_t)(b & 0x3F) << 8) | p[1];
        uint64_t u = s >> 1;
        if (s & 1)
            u |= ~UINT64_C(0x1FFF); /* ...E000 */
        *v = (int64_t)u;
        return 2;
    }
    if (b == 0xC1) {
        if (size < 9)
            return MANTRA_ETRUNCATED;
        uint64_t u = 0;
        for (int i = 1; i <= 8; i++)
            u = (u << 8) | p[i];
        *v = (int64_t)u;
        return 9;
    }
    /* 0xC0 and every other byte from 0xC2 up: 32 bits big-endian, sign-extended. */
    if (size < 5)
        return MANTRA_ETRUNCATED;
    uint32_t u = 0;
    for (int i = 1; i <= 4; i++)
        u = (u << 8) | p[i];
    *v = (int64_t)(int32_t)u;
    return 5;
}
