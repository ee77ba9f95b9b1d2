/* ecma-build-internal.h - the metadata writer's state, shared by md_build.c (heaps, rows, bodies)
 * and md_write.c (serialising the metadata and the PE file). Private. */
#ifndef MANTRA_ECMA_BUILD_INTERNAL_H
#define MANTRA_ECMA_BUILD_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "../common/hashmap-internal.h"
#include "ecma-internal.h"

/* The file layout (md_write.c): .text at this RVA starts with the CLI header, then the bodies. */
#define EC_TEXT_RVA 0x2000u
#define EC_CLI_HEADER_SIZE 72u

typedef struct ec_buf {
    uint8_t *data;
    size_t size, cap;
} ec_buf;

struct mantra_md_builder {
    int status;
    ec_buf strings, blobs, guids, user_strings, il;
    cm_map string_at, blob_at, user_string_at; /* content hash -> heap index */
    uint32_t *rows[MANTRA_MD_TABLES];           /* nrows * ncolumns values */
    uint32_t nrows[MANTRA_MD_TABLES];
    size_t caprows[MANTRA_MD_TABLES];
};

/* Appends n bytes; MANTRA_OK or the (sticky) error. */
int ec_buf_put(mantra_md_builder *b, ec_buf *buf, const void *data, size_t n);
/* The compressed form of v (§23.2, v <= 0x1FFFFFFF) in out: its length (1, 2 or 4). */
size_t ec_compress(uint32_t v, uint8_t out[4]);

#endif
