/* SHA-1 from its definition in FIPS 180-4 (section 6.1); used for EventSource provider GUIDs (manifest/)
 * and assemblies' public key tokens (ecma/). */
#include <string.h>

#include "common/sha1-internal.h"

static uint32_t rol(uint32_t x, unsigned n) { return (x << n) | (x >> (32u - n)); }

static void compress(uint32_t h[5], const uint8_t block[64]) {
    uint32_t w[80];
    for (unsigned t = 0; t < 16; t++)
        w[t] = (uint32_t)block[4 * t] << 24 | (uint32_t)block[4 * t + 1] << 16 | (uint32_t)block[4 * t + 2] << 8 |
               (uint32_t)block[4 * t + 3];
    for (unsigned t = 16; t < 80; t++)
        w[t] = rol(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1);
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
    for (unsigned t = 0; t < 80; t++) {
        uint32_t f, k;
        if (t < 20) {
            f = (b & c) | (~b & d);
            k = 0x5a827999u;
        } else if (t < 40) {
            f = b ^ c ^ d;
            k = 0x6ed9eba1u;
        } else if (t < 60) {
            f = (b & c) | (b & d) | (c & d);
            k = 0x8f1bbcdcu;
        } else {
            f = b ^ c ^ d;
            k = 0xca62c1d6u;
        }
        uint32_t tmp = rol(a, 5) + f + e + k + w[t];
        e = d;
        d = c;
        c = rol(b, 30);
        b = a;
        a = tmp;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
}

void cm_sha1_init(cm_sha1 *s) {
    s->h[0] = 0x67452301u;
    s->h[1] = 0xefcdab89u;
    s->h[2] = 0x98badcfeu;
    s->h[3] = 0x10325476u;
    s->h[4] = 0xc3d2e1f0u;
    s->length = 0;
    s->fill = 0;
}

void cm_sha1_update(cm_sha1 *s, const void *data, size_t size) {
    const uint8_t *p = data;
    s->length += size;
    while (size > 0) {
        size_t n = 64 - s->fill;
        if (n > size)
            n = size;
        memcpy(s->block + s->fill, p, n);
        s->fill += n;
        p += n;
        size -= n;
        if (s->fill == 64) {
            compress(s->h, s->block);
            s->fill = 0;
        }
    }
}

void cm_sha1_final(cm_sha1 *s, uint8_t digest[20]) {
    uint64_t bits = s->length * 8u;
    uint8_t pad = 0x80;
    uint8_t zero = 0;
    uint8_t len[8];
    cm_sha1_update(s, &pad, 1);
    while (s->fill != 56)
        cm_sha1_update(s, &zero, 1);
    for (unsigned i = 0; i < 8; i++)
        len[i] = (uint8_t)(bits >> (56 - 8 * i));
    cm_sha1_update(s, len, 8);
    for (unsigned i = 0; i < 5; i++) {
        digest[4 * i] = (uint8_t)(s->h[i] >> 24);
        digest[4 * i + 1] = (uint8_t)(s->h[i] >> 16);
        digest[4 * i + 2] = (uint8_t)(s->h[i] >> 8);
        digest[4 * i + 3] = (uint8_t)s->h[i];
    }
}
