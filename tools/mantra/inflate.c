/* A DEFLATE decoder (RFC 1951): stored, fixed-Huffman and dynamic-Huffman blocks, into an output of
 * known size (a ZIP entry's uncompressed size). Every read and write is bounds-checked; a malformed
 * stream is refused with the reason and the input offset where decoding stopped. */
#include <string.h>

#include "pgo_mibc.h"

typedef struct inflater {
    const uint8_t *in;
    size_t in_size, in_at;
    uint32_t bits, nbits;
    uint8_t *out;
    size_t out_size, out_at;
    const char *why;
} inflater;

/* n bits (n <= 16), least significant first; -1 at the end of the input. */
static int32_t bits(inflater *s, unsigned n) {
    while (s->nbits < n) {
        if (s->in_at == s->in_size) {
            s->why = "the compressed data ends inside a block";
            return -1;
        }
        s->bits |= (uint32_t)s->in[s->in_at++] << s->nbits;
        s->nbits += 8;
    }
    int32_t v = (int32_t)(s->bits & ((1u << n) - 1));
    s->bits >>= n;
    s->nbits -= n;
    return v;
}

/* A canonical Huffman code: counts per length, symbols in code order (RFC 1951 §3.2.2). */
typedef struct huffman {
    uint16_t count[16];
    uint16_t symbol[320];
} huffman;

/* Builds h from lengths[0..n); 0, or -1 when the lengths over-subscribe the code. */
static int build(huffman *h, const uint8_t *lengths, unsigned n) {
    uint16_t offs[16];
    memset(h->count, 0, sizeof h->count);
    for (unsigned i = 0; i < n; i++)
        h->count[lengths[i]]++;
    int left = 1;
    for (int len = 1; len < 16; len++) {
        left = left * 2 - h->count[len];
        if (left < 0)
            return -1;
    }
    offs[1] = 0;
    for (int len = 1; len < 15; len++)
        offs[len + 1] = (uint16_t)(offs[len] + h->count[len]);
    for (unsigned i = 0; i < n; i++)
        if (lengths[i])
            h->symbol[offs[lengths[i]]++] = (uint16_t)i;
    return 0;
}

/* One symbol of h; -1 on bad input. */
static int decode(inflater *s, const huffman *h) {
    int code = 0, first = 0, index = 0;
    for (int len = 1; len < 16; len++) {
        int32_t b = bits(s, 1);
        if (b < 0)
            return -1;
        code |= b;
        int count = h->count[len];
        if (code - count < first)
            return h->symbol[index + (code - first)];
        index += count;
        first += count;
        first <<= 1;
        code <<= 1;
    }
    s->why = "a Huffman code that the block's code table does not have";
    return -1;
}

static const uint16_t len_base[29] = {3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31,
                                      35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
static const uint8_t len_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
static const uint16_t dist_base[30] = {1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193,
                                       257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
static const uint8_t dist_extra[30] = {0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6,
                                       7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

static int codes(inflater *s, const huffman *lit, const huffman *dist) {
    for (;;) {
        int sym = decode(s, lit);
        if (sym < 0)
            return -1;
        if (sym < 256) {
            if (s->out_at == s->out_size) {
                s->why = "more data than the entry's uncompressed size";
                return -1;
            }
            s->out[s->out_at++] = (uint8_t)sym;
        } else if (sym == 256) {
            return 0;
        } else {
            sym -= 257;
            if (sym >= 29) {
                s->why = "a length code past 285";
                return -1;
            }
            int32_t e = bits(s, len_extra[sym]);
            int d = decode(s, dist);
            if (e < 0 || d < 0)
                return -1;
            if (d >= 30) {
                s->why = "a distance code past 29";
                return -1;
            }
            int32_t de = bits(s, dist_extra[d]);
            if (de < 0)
                return -1;
            size_t len = (size_t)len_base[sym] + (size_t)e, back = (size_t)dist_base[d] + (size_t)de;
            if (back > s->out_at) {
                s->why = "a distance back past the start of the data";
                return -1;
            }
            if (len > s->out_size - s->out_at) {
                s->why = "more data than the entry's uncompressed size";
                return -1;
            }
            for (size_t i = 0; i < len; i++, s->out_at++)
                s->out[s->out_at] = s->out[s->out_at - back];
        }
    }
}

static int stored(inflater *s) {
    s->bits = 0;
    s->nbits = 0; /* to the byte boundary */
    if (s->in_size - s->in_at < 4) {
        s->why = "a stored block's length is cut";
        return -1;
    }
    const uint8_t *p = s->in + s->in_at;
    unsigned len = p[0] | (unsigned)p[1] << 8, nlen = p[2] | (unsigned)p[3] << 8;
    s->in_at += 4;
    if (len != (~nlen & 0xFFFFu)) {
        s->why = "a stored block's LEN and NLEN do not match";
        return -1;
    }
    if (len > s->in_size - s->in_at || len > s->out_size - s->out_at) {
        s->why = "a stored block runs past the input or the entry's size";
        return -1;
    }
    memcpy(s->out + s->out_at, s->in + s->in_at, len);
    s->in_at += len;
    s->out_at += len;
    return 0;
}

static int dynamic(inflater *s, huffman *lit, huffman *dist) {
    static const uint8_t order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
    uint8_t lengths[320];
    int32_t nlen = bits(s, 5), ndist = bits(s, 5), ncode = bits(s, 4);
    if (nlen < 0 || ndist < 0 || ncode < 0)
        return -1;
    nlen += 257;
    ndist += 1;
    ncode += 4;
    if (nlen > 286 || ndist > 30) {
        s->why = "a dynamic block with more than 286 length or 30 distance codes";
        return -1;
    }
    memset(lengths, 0, sizeof lengths);
    for (int i = 0; i < ncode; i++) {
        int32_t b = bits(s, 3);
        if (b < 0)
            return -1;
        lengths[order[i]] = (uint8_t)b;
    }
    huffman lencode;
    if (build(&lencode, lengths, 19) < 0) {
        s->why = "an over-subscribed code length code";
        return -1;
    }
    int at = 0;
    while (at < nlen + ndist) {
        int sym = decode(s, &lencode);
        if (sym < 0)
            return -1;
        if (sym < 16) {
            lengths[at++] = (uint8_t)sym;
            continue;
        }
        int len = 0, rep;
        if (sym == 16) {
            if (at == 0) {
                s->why = "a repeat of the previous length with none before it";
                return -1;
            }
            len = lengths[at - 1];
            rep = 3 + bits(s, 2);
        } else if (sym == 17) {
            rep = 3 + bits(s, 3);
        } else {
            rep = 11 + bits(s, 7);
        }
        if (s->why)
            return -1;
        if (at + rep > nlen + ndist) {
            s->why = "code lengths past the number of codes";
            return -1;
        }
        while (rep--)
            lengths[at++] = (uint8_t)len;
    }
    if (lengths[256] == 0) {
        s->why = "a dynamic block without an end-of-block code";
        return -1;
    }
    if (build(lit, lengths, (unsigned)nlen) < 0 || build(dist, lengths + nlen, (unsigned)ndist) < 0) {
        s->why = "an over-subscribed literal/length or distance code";
        return -1;
    }
    return codes(s, lit, dist);
}

int pgo_inflate(const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size, size_t *at, const char **why) {
    inflater s = {in, in_size, 0, 0, 0, out, out_size, 0, NULL};
    huffman lit, dist;
    int last = 0, rc = 0;
    while (!last && rc == 0) {
        int32_t hdr = bits(&s, 3);
        if (hdr < 0) {
            rc = -1;
            break;
        }
        last = hdr & 1;
        switch (hdr >> 1) {
        case 0:
            rc = stored(&s);
            break;
        case 1: { /* fixed codes (§3.2.6) */
            uint8_t lengths[320];
            memset(lengths, 8, 144);
            memset(lengths + 144, 9, 112);
            memset(lengths + 256, 7, 24);
            memset(lengths + 280, 8, 8);
            build(&lit, lengths, 288);
            memset(lengths, 5, 30);
            build(&dist, lengths, 30);
            rc = codes(&s, &lit, &dist);
            break;
        }
        case 2:
            rc = dynamic(&s, &lit, &dist);
            break;
        default:
            s.why = "a block of type 3 (reserved)";
            rc = -1;
        }
    }
    if (rc == 0 && s.out_at != out_size) {
        s.why = "less data than the entry's uncompressed size";
        rc = -1;
    }
    *at = s.in_at;
    *why = s.why ? s.why : "";
    return rc;
}
