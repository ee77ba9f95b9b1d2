/* md_build.c - the metadata writer's builder: heaps (#Strings, #Blob, #GUID, #US: Partition II
 * §24.2.3-5, deduplicated), table rows and IL method bodies (§25.4.2-3). md_write.c serialises
 * what it holds. */
#include <stdlib.h>
#include <string.h>

#include "../common/grow-internal.h"
#include "../common/utf-internal.h"
#include "ecma-build-internal.h"

/* FNV-1a over a domain byte and the bytes: the key of the deduplication maps. */
static uint64_t content_hash(uint8_t domain, const void *data, size_t n) {
    return cm_fnv1a(cm_fnv1a(CM_FNV_BASIS, &domain, 1), data, n);
}

int ec_buf_put(mantra_md_builder *b, ec_buf *buf, const void *data, size_t n) {
    if (b->status != MANTRA_OK)
        return b->status;
    if (cm_grow((void **)&buf->data, &buf->cap, buf->size + n, 1, 256) != 0)
        return b->status = MANTRA_ENOMEM;
    if (n)
        memcpy(buf->data + buf->size, data, n);
    buf->size += n;
    return MANTRA_OK;
}

/* The compressed form of v (§23.2, at most 0x1FFFFFFF) in out: its length. */
size_t ec_compress(uint32_t v, uint8_t out[4]) {
    if (v < 0x80) {
        out[0] = (uint8_t)v;
        return 1;
    }
    if (v < 0x4000) {
        out[0] = (uint8_t)(0x80 | v >> 8);
        out[1] = (uint8_t)v;
        return 2;
    }
    out[0] = (uint8_t)(0xC0 | v >> 24);
    out[1] = (uint8_t)(v >> 16);
    out[2] = (uint8_t)(v >> 8);
    out[3] = (uint8_t)v;
    return 4;
}

mantra_md_builder *mantra_md_builder_new(void) {
    mantra_md_builder *b = calloc(1, sizeof *b);
    if (b == NULL)
        return NULL;
    static const uint8_t zero = 0;
    /* index 0 of #Strings, #Blob and #US is the empty entry */
    ec_buf_put(b, &b->strings, &zero, 1);
    ec_buf_put(b, &b->blobs, &zero, 1);
    ec_buf_put(b, &b->user_strings, &zero, 1);
    if (b->status != MANTRA_OK) {
        mantra_md_builder_free(b);
        return NULL;
    }
    return b;
}

void mantra_md_builder_free(mantra_md_builder *b) {
    if (b == NULL)
        return;
    free(b->strings.data);
    free(b->blobs.data);
    free(b->guids.data);
    free(b->user_strings.data);
    free(b->il.data);
    cm_map_free(&b->string_at);
    cm_map_free(&b->blob_at);
    cm_map_free(&b->user_string_at);
    for (unsigned t = 0; t < MANTRA_MD_TABLES; t++)
        free(b->rows[t]);
    free(b);
}

int mantra_md_builder_status(const mantra_md_builder *b) { return b ? b->status : MANTRA_EINVAL; }

/* An entry of a blob-shaped heap (#Blob, #US): its compressed length, then bytes; deduplicated. */
static uint32_t add_counted(mantra_md_builder *b, ec_buf *heap, cm_map *at, uint8_t domain, const void *data,
                            size_t n) {
    if (b->status != MANTRA_OK)
        return 0;
    if (n > 0x1FFFFFFF) {
        b->status = MANTRA_ERANGE;
        return 0;
    }
    uint64_t key = content_hash(domain, data, n);
    uint64_t *have = cm_map_get(at, key);
    uint8_t len[4];
    size_t ln = ec_compress((uint32_t)n, len);
    if (have && *have + ln + n <= heap->size && memcmp(heap->data + *have, len, ln) == 0 &&
        memcmp(heap->data + *have + ln, data, n) == 0)
        return (uint32_t)*have;
    uint32_t index = (uint32_t)heap->size;
    if (heap->size > 0xFFFFFFFFu - ln - n) {
        b->status = MANTRA_ERANGE;
        return 0;
    }
    if (ec_buf_put(b, heap, len, ln) != MANTRA_OK || ec_buf_put(b, heap, data, n) != MANTRA_OK)
        return 0;
    if (have == NULL && cm_map_put(at, key, index) != 0) {
        b->status = MANTRA_ENOMEM;
        return 0;
    }
    return index;
}

uint32_t mantra_md_add_blob(mantra_md_builder *b, const void *data, size_t size) {
    if (b == NULL || (data == NULL && size != 0))
        return 0;
    return size == 0 ? 0 : add_counted(b, &b->blobs, &b->blob_at, 'b', data, size);
}

uint32_t mantra_md_add_string(mantra_md_builder *b, const char *s) {
    if (b == NULL || s == NULL || b->status != MANTRA_OK) {
        if (b && s == NULL)
            b->status = MANTRA_EINVAL;
        return 0;
    }
    size_t n = strlen(s);
    if (n == 0)
        return 0;
    uint64_t key = content_hash('s', s, n);
    uint64_t *have = cm_map_get(&b->string_at, key);
    if (have && strcmp((const char *)b->strings.data + *have, s) == 0)
        return (uint32_t)*have;
    uint32_t index = (uint32_t)b->strings.size;
    if (b->strings.size > 0xFFFFFFFFu - n - 1) {
        b->status = MANTRA_ERANGE;
        return 0;
    }
    if (ec_buf_put(b, &b->strings, s, n + 1) != MANTRA_OK)
        return 0;
    if (have == NULL && cm_map_put(&b->string_at, key, index) != 0) {
        b->status = MANTRA_ENOMEM;
        return 0;
    }
    return index;
}

uint32_t mantra_md_add_guid(mantra_md_builder *b, const mantra_guid *g) {
    if (b == NULL || g == NULL || b->status != MANTRA_OK)
        return 0;
    uint8_t bytes[16];
    memcpy(bytes, &g->data1, 4); /* little-endian hosts only (mantra/event.h) */
    memcpy(bytes + 4, &g->data2, 2);
    memcpy(bytes + 6, &g->data3, 2);
    memcpy(bytes + 8, g->data4, 8);
    if (ec_buf_put(b, &b->guids, bytes, 16) != MANTRA_OK)
        return 0;
    return (uint32_t)(b->guids.size / 16);
}

uint32_t mantra_md_add_user_string(mantra_md_builder *b, const char *utf8) {
    if (b == NULL || utf8 == NULL || b->status != MANTRA_OK) {
        if (b && utf8 == NULL)
            b->status = MANTRA_EINVAL;
        return 0;
    }
    size_t bytes, units = cm_utf8_utf16_units(utf8, &bytes);
    if (units == SIZE_MAX) {
        b->status = MANTRA_EINVAL;
        return 0;
    }
    uint8_t *u = malloc(units * 2 + 1);
    if (u == NULL) {
        b->status = MANTRA_ENOMEM;
        return 0;
    }
    cm_utf8_to_utf16le(utf8, bytes, u);
    /* the final byte (§24.2.4): 1 when a unit has a non-zero high byte or its low byte is one of
     * 0x01-0x08, 0x0E-0x1F, 0x27, 0x2D, 0x7F */
    uint8_t flag = 0;
    for (size_t i = 0; i < units; i++) {
        uint8_t lo = u[2 * i], hi = u[2 * i + 1];
        if (hi != 0 || (lo >= 0x01 && lo <= 0x08) || (lo >= 0x0E && lo <= 0x1F) || lo == 0x27 || lo == 0x2D || lo == 0x7F)
            flag = 1;
    }
    u[units * 2] = flag;
    uint32_t index = add_counted(b, &b->user_strings, &b->user_string_at, 'u', u, units * 2 + 1);
    free(u);
    if (index > 0xFFFFFF) { /* a user string token holds 24 bits of index */
        b->status = MANTRA_ERANGE;
        return 0;
    }
    return index;
}

uint32_t mantra_md_add_row(mantra_md_builder *b, unsigned table, const uint32_t values[MANTRA_MD_MAX_COLUMNS]) {
    if (b == NULL || b->status != MANTRA_OK)
        return 0;
    if (table >= MANTRA_MD_TABLES || values == NULL || b->nrows[table] >= 0xFFFFFF) {
        b->status = MANTRA_EINVAL;
        return 0;
    }
    unsigned nc = ec_tables[table].ncolumns;
    if (cm_grow((void **)&b->rows[table], &b->caprows[table], (size_t)(b->nrows[table] + 1) * nc, sizeof(uint32_t),
                (size_t)16 * nc) != 0) {
        b->status = MANTRA_ENOMEM;
        return 0;
    }
    memcpy(b->rows[table] + (size_t)b->nrows[table] * nc, values, nc * sizeof(uint32_t));
    return ++b->nrows[table];
}

uint32_t mantra_md_builder_rows(const mantra_md_builder *b, unsigned table) {
    return b != NULL && table < MANTRA_MD_TABLES ? b->nrows[table] : 0;
}

uint32_t mantra_md_add_method_body(mantra_md_builder *b, const uint8_t *il, size_t size, uint16_t max_stack) {
    if (b == NULL || (il == NULL && size != 0) || b->status != MANTRA_OK)
        return 0;
    if (size > 0x7FFFFFFF) {
        b->status = MANTRA_ERANGE;
        return 0;
    }
    uint32_t at;
    if (size < 64 && max_stack <= 8) { /* tiny header: (size << 2) | CorILMethod_TinyFormat */
        uint8_t h = (uint8_t)(size << 2 | 0x2);
        at = (uint32_t)b->il.size;
        ec_buf_put(b, &b->il, &h, 1);
    } else { /* fat header, 4-byte aligned: flags 0x3 (FatFormat) and size 3 (dwords), MaxStack, CodeSize,
                LocalVarSigTok 0 */
        static const uint8_t pad[4] = {0};
        ec_buf_put(b, &b->il, pad, (4 - b->il.size % 4) % 4);
        uint8_t h[12] = {0x03, 0x30, (uint8_t)max_stack, (uint8_t)(max_stack >> 8), (uint8_t)size,
                         (uint8_t)(size >> 8), (uint8_t)(size >> 16), (uint8_t)(size >> 24), 0, 0, 0, 0};
        at = (uint32_t)b->il.size;
        ec_buf_put(b, &b->il, h, sizeof h);
    }
    if (ec_buf_put(b, &b->il, il, size) != MANTRA_OK)
        return 0;
    return EC_TEXT_RVA + EC_CLI_HEADER_SIZE + at;
}
