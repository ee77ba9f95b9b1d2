/* UTF-8 <-> UTF-16 helpers shared by the payload serialiser and the decoders. */
#ifndef MANTRA_UTF_INTERNAL_H
#define MANTRA_UTF_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* mantra_utf8_decode (one scalar value) is public: mantra/decode.h. */
#include "mantra/decode.h"

/* Number of UTF-16 code units for a NUL-terminated UTF-8 string (not counting the terminator),
 * and its byte length in *bytes; returns SIZE_MAX when the string is not valid UTF-8. */
size_t mantra_utf8_utf16_units(const char *s, size_t *bytes);

/* Writes the UTF-16LE form of s (bytes long, valid UTF-8) to out; returns bytes written. */
size_t mantra_utf8_to_utf16le(const char *s, size_t bytes, uint8_t *out);

#endif
