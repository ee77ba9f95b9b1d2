/* UTF-8 <-> UTF-16 conversion (RFC 3629 for UTF-8, RFC 2781 for UTF-16). */
#include "utf-internal.h"

#include <string.h>

#include "mantra/decode.h"

size_t mantra_utf8_decode(const uint8_t *s, size_t n, uint32_t *cp) {
    if (n == 0)
        return 0;
    uint8_t b = s[0];
    if (b < 0x80) {
        *cp = b;
        return 1;
    }
    size_t len;
    uint32_t min;
    uint32_t v;
    if ((b & 0xE0) == 0xC0) {
        len = 2;
        min = 0x80;
        v = b & 0x1Fu;
    } else if ((b & 0xF0) == 0xE0) {
        len = 3;
        min = 0x800;
        v = b & 0x0Fu;
    } else if ((b & 0xF8) == 0xF0) {
        len = 4;
        min = 0x10000;
        v = b & 0x07u;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        v = (v << 6) | (s[i] & 0x3Fu);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        return 0;
    *cp = v;
    return len;
}

size_t cm_utf8_utf16_units(const char *s, size_t *bytes) {
    const uint8_t *p = (const uint8_t *)s;
    size_t units = 0;
    size_t i = 0;
    for (;;) {
        uint8_t b = p[i];
        if (b == 0)
            break;
        if (b < 0x80) { /* ASCII: one unit per byte */
            units++;
            i++;
            continue;
        }
        uint32_t cp;
        size_t len = mantra_utf8_decode(p + i, 4, &cp); /* a NUL inside stops it: not a continuation byte */
        if (len == 0)
            return SIZE_MAX;
        units += cp >= 0x10000 ? 2 : 1;
        i += len;
    }
    *bytes = i;
    return units;
}

size_t cm_utf8_to_utf16le(const char *s, size_t bytes, uint8_t *out) {
    const uint8_t *p = (const uint8_t *)s;
    size_t o = 0;
    size_t i = 0;
    while (i < bytes) {
        /* ASCII runs, eight bytes at a time. */
        while (i + 8 <= bytes) {
            uint64_t w;
            memcpy(&w, p + i, 8);
            if (w & UINT64_C(0x8080808080808080))
                break;
            for (int k = 0; k < 8; k++) {
                out[o + 2 * (size_t)k] = p[i + (size_t)k];
                out[o + 2 * (size_t)k + 1] = 0;
            }
            i += 8;
            o += 16;
        }
        if (i >= bytes)
            break;
        uint32_t cp;
        if (p[i] < 0x80) {
            cp = p[i++];
        } else {
            size_t len = mantra_utf8_decode(p + i, bytes - i, &cp);
            if (len == 0) { /* callers validate first; never loop forever */
                cp = 0xFFFD;
                len = 1;
            }
            i += len;
        }
        if (cp >= 0x10000) {
            uint32_t v = cp - 0x10000;
            uint16_t hi = (uint16_t)(0xD800 + (v >> 10));
            uint16_t lo = (uint16_t)(0xDC00 + (v & 0x3FF));
            out[o++] = (uint8_t)hi;
            out[o++] = (uint8_t)(hi >> 8);
            out[o++] = (uint8_t)lo;
            out[o++] = (uint8_t)(lo >> 8);
        } else {
            out[o++] = (uint8_t)cp;
            out[o++] = (uint8_t)(cp >> 8);
        }
    }
    return o;
}

/* Appends the UTF-8 form of cp to out when it fits; always returns its length. */
static size_t put_utf8(uint32_t cp, char *out, size_t used, size_t room) {
    uint8_t buf[4];
    size_t len;
    if (cp < 0x80) {
        buf[0] = (uint8_t)cp;
        len = 1;
    } else if (cp < 0x800) {
        buf[0] = (uint8_t)(0xC0 | (cp >> 6));
        buf[1] = (uint8_t)(0x80 | (cp & 0x3F));
        len = 2;
    } else if (cp < 0x10000) {
        buf[0] = (uint8_t)(0xE0 | (cp >> 12));
        buf[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        buf[2] = (uint8_t)(0x80 | (cp & 0x3F));
        len = 3;
    } else {
        buf[0] = (uint8_t)(0xF0 | (cp >> 18));
        buf[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
        buf[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        buf[3] = (uint8_t)(0x80 | (cp & 0x3F));
        len = 4;
    }
    if (used + len < room)
        memcpy(out + used, buf, len);
    return len;
}

/* Next code point of a UTF-16 view at *i (unpaired surrogates give U+FFFD). */
static uint32_t next_cp(mantra_str16 s, size_t *i) {
    uint32_t u = mantra_str16_at(s, (*i)++);
    if (u >= 0xD800 && u <= 0xDBFF && *i < s.units) {
        uint32_t lo = mantra_str16_at(s, *i);
        if (lo >= 0xDC00 && lo <= 0xDFFF) {
            (*i)++;
            return 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
        }
    }
    if (u >= 0xD800 && u <= 0xDFFF)
        return 0xFFFD;
    return u;
}

size_t mantra_str16_to_utf8(mantra_str16 s, char *out, size_t out_size) {
    size_t need = 0;
    size_t written = 0;
    int truncated = 0;
    for (size_t i = 0; i < s.units;) {
        uint32_t cp = next_cp(s, &i);
        size_t len = put_utf8(cp, out, written, truncated ? 0 : out_size);
        if (!truncated && written + len < out_size)
            written += len;
        else
            truncated = 1;
        need += len;
    }
    if (out_size > 0)
        out[written] = '\0';
    return need;
}

int mantra_str16_equals_utf8(mantra_str16 s, const char *utf8) {
    const uint8_t *p = (const uint8_t *)utf8;
    size_t n = strlen(utf8);
    size_t j = 0;
    for (size_t i = 0; i < s.units;) {
        uint32_t cp = next_cp(s, &i);
        uint32_t want;
        size_t len = mantra_utf8_decode(p + j, n - j, &want);
        if (len == 0 || want != cp)
            return 0;
        j += len;
    }
    return j == n;
}

size_t cm_utf8_invalid_at(const uint8_t *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        uint32_t cp;
        size_t len = mantra_utf8_decode(s + i, n - i, &cp);
        if (len == 0)
            return i;
        i += len;
    }
    return SIZE_MAX;
}

size_t cm_utf16_to_utf8(const uint8_t *d, size_t n, int little_endian, uint8_t *out, enum cm_utf16_problem *problem) {
    *problem = CM_UTF16_OK;
    if (n % 2 != 0) {
        *problem = CM_UTF16_ODD_LENGTH;
        return SIZE_MAX;
    }
    size_t o = 0;
    for (size_t i = 0; i < n; i += 2) {
        uint32_t u = little_endian ? (uint32_t)(d[i] | d[i + 1] << 8) : (uint32_t)(d[i] << 8 | d[i + 1]);
        uint32_t cp = u;
        if (u >= 0xD800 && u <= 0xDBFF) {
            if (i + 2 >= n) {
                *problem = CM_UTF16_CUT_PAIR;
                return SIZE_MAX;
            }
            uint32_t v = little_endian ? (uint32_t)(d[i + 2] | d[i + 3] << 8) : (uint32_t)(d[i + 2] << 8 | d[i + 3]);
            if (v < 0xDC00 || v > 0xDFFF) {
                *problem = CM_UTF16_BAD_LOW;
                return SIZE_MAX;
            }
            cp = 0x10000 + ((u - 0xD800) << 10) + (v - 0xDC00);
            i += 2;
        } else if (u >= 0xDC00 && u <= 0xDFFF) {
            *problem = CM_UTF16_LONE_LOW;
            return SIZE_MAX;
        }
        o += put_utf8(cp, (char *)out, o, SIZE_MAX);
    }
    return o;
}
