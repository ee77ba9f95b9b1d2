/* UTF-8 <-> UTF-16 helpers shared by the payload serialiser and the decoders. */
#ifndef MANTRA_UTF_INTERNAL_H
#define MANTRA_UTF_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* mantra_utf8_decode (one scalar value) is public: mantra/decode.h. */
#include "mantra/decode.h"

/* Number of UTF-16 code units for a NUL-terminated UTF-8 string (not counting the terminator),
 * and its byte length in *bytes; returns SIZE_MAX when the string is not valid UTF-8. */
size_t cm_utf8_utf16_units(const char *s, size_t *bytes);

/* Writes the UTF-16LE form of s (bytes long, valid UTF-8) to out; returns bytes written. */
size_t cm_utf8_to_utf16le(const char *s, size_t bytes, uint8_t *out);

/* Offset of the first byte of s[0..n) that does not start a valid UTF-8 scalar (as
 * mantra_utf8_decode() judges it), or SIZE_MAX when all of it is valid. */
size_t cm_utf8_invalid_at(const uint8_t *s, size_t n);

/* Why cm_utf16_to_utf8() stopped. */
enum cm_utf16_problem {
    CM_UTF16_OK = 0,
    CM_UTF16_ODD_LENGTH,    /* a byte left over */
    CM_UTF16_CUT_PAIR,      /* a high surrogate is the last unit */
    CM_UTF16_BAD_LOW,       /* a high surrogate not followed by a low one */
    CM_UTF16_LONE_LOW,      /* a low surrogate without a high one before it */
};

/* Converts n bytes of UTF-16 (little- or big-endian code units, no byte order mark) to UTF-8 at out
 * (room for n / 2 * 3 bytes); returns the bytes written, or SIZE_MAX with *problem set. */
size_t cm_utf16_to_utf8(const uint8_t *d, size_t n, int little_endian, uint8_t *out, enum cm_utf16_problem *problem);

#endif
