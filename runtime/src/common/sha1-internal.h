/* sha1-internal.h - SHA-1 (FIPS 180-4): EventSource provider GUIDs (manifest/), assemblies' public
 * key tokens (ecma/). Private. */
#ifndef MANTRA_SHA1_INTERNAL_H
#define MANTRA_SHA1_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

typedef struct cm_sha1 {
    uint32_t h[5];
    uint64_t length; /* bytes so far */
    uint8_t block[64];
    size_t fill;
} cm_sha1;
void cm_sha1_init(cm_sha1 *s);
void cm_sha1_update(cm_sha1 *s, const void *data, size_t size);
void cm_sha1_final(cm_sha1 *s, uint8_t digest[20]);

#endif
