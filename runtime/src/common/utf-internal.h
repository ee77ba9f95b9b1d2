/* UTF-8 <-> UTF-16 helpers shared by the payload serialiser and the decoders. */
#ifndef MANTRA_UTF_INTERNAL_H
#define MANTRA_UTF_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* Decodes one UTF-8 scalar at s[0..n); returns its byte length (1..4) and stores the code point,
 * or returns 0 when the sequence is invalid (overlong, surrogate, out of range, truncated). */
size_t mantra_utf8_decode(const uint8_t *s, size_t n, uint32_t *cp);

/* Number of UTF-16 code units for a NUL-terminated UTF-8 string (not counting the terminator),
 * and its byte length in *bytes; returns SIZE_MAX when the string is not valid UTF-8. */
size_t mantra_utf8_utf16_units(const char *s, size_t *bytes);

/* Writes the UTF-16LE form of s (bytes long, valid UTF-8) to out; returns bytes written. */
size_t mantra_utf8_to_utf16le(const char *s, size_t bytes, uint8_t *out);

#endif
