/* SHA-1 (FIPS 180-4 §6.1), for the public key token of an assembly name: the last 8 bytes of the
 * SHA-1 of the public key, in reverse order (ECMA-335 Partition II §6.2.1.3). */
#include <string.h>

#include "pgo_mibc.h"

static uint32_t rol(uint32_t x, int n) { return x << n | x >> (32 - n); }

static void block(uint32_t h[5], const uint8_t *p) {
    uint32_t w[80];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 80; i++)
        w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
    for (int i = 0; i < 80; i++) {
        uint32_t f, k;
        if (i < 20) {
            f = (b & c) | (~b & d);
            k = 0x5A827999u;
        } else if (i < 40) {
            f = b ^ c ^ d;
            k = 0x6ED9EBA1u;
        } else if (i < 60) {
            f = (b & c) | (b & d) | (c & d);
            k = 0x8F1BBCDCu;
        } else {
            f = b ^ c ^ d;
            k = 0xCA62C1D6u;
        }
        uint32_t t = rol(a, 5) + f + e + k + w[i];
        e = d;
        d = c;
        c = rol(b, 30);
        b = a;
        a = t;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
}

void pgo_sha1(const uint8_t *data, size_t size, uint8_t out[20]) {
    uint32_t h[5] = {0x67452301u, 0xEFCDAB89u, 0x98BADCFEu, 0x10325476u, 0xC3D2E1F0u};
    size_t i = 0;
    for (; i + 64 <= size; i += 64)
        block(h, data + i);
    uint8_t last[128] = {0};
    size_t rest = size - i;
    memcpy(last, data + i, rest);
    last[rest] = 0x80;
    size_t n = rest + 9 <= 64 ? 64 : 128;
    uint64_t bits = (uint64_t)size * 8;
    for (int k = 0; k < 8; k++)
        last[n - 1 - (size_t)k] = (uint8_t)(bits >> (8 * k));
    for (size_t k = 0; k < n; k += 64)
        block(h, last + k);
    for (int k = 0; k < 5; k++) {
        out[4 * k] = (uint8_t)(h[k] >> 24);
        out[4 * k + 1] = (uint8_t)(h[k] >> 16);
        out[4 * k + 2] = (uint8_t)(h[k] >> 8);
        out[4 * k + 3] = (uint8_t)h[k];
    }
}

void pgo_public_key_token(const uint8_t *key, size_t size, uint8_t token[8]) {
    uint8_t d[20];
    pgo_sha1(key, size, d);
    for (int i = 0; i < 8; i++)
        token[i] = d[19 - i];
}
