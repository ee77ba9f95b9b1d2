/* md_write.c - serialising a builder (md_build.c): the #~ table stream (Partition II §24.2.6), the
 * metadata root and stream headers (§24.2.1-2), and the PE file around them (§25: MS-DOS header,
 * PE signature, COFF header, PE32 optional header, one .text section, the CLI header §25.3.3).
 *
 * Layout, fixed so that a body's RVA is known when it is added: the headers fill the first 0x200
 * bytes; .text is at RVA 0x2000 and file offset 0x200 and holds the CLI header (72 bytes), the
 * method bodies, then the metadata, each 4-byte aligned. No time stamp, no checksum, no import
 * table and no native entry point (a metadata-only file is never run), so the same builder gives
 * the same bytes. */
#include <stdlib.h>
#include <string.h>

#include "../common/le-internal.h"
#include "ecma-build-internal.h"

#define FILE_ALIGNMENT 0x200u
#define SECTION_ALIGNMENT 0x2000u
#define PE_OFFSET 0x80u
#define METADATA_VERSION "v4.0.30319"
/* The Sorted bits ECMA-335 requires for the tables that must be sorted (§22: InterfaceImpl,
 * Constant, CustomAttribute, FieldMarshal, DeclSecurity, ClassLayout, FieldLayout, MethodSemantics,
 * MethodImpl, ImplMap, FieldRVA, NestedClass, GenericParam, GenericParamConstraint). */
#define SORTED_TABLES UINT64_C(0x000016003301FA00)

static size_t pad4(size_t n) { return (n + 3) & ~(size_t)3; }

/* The raw value of column c of a row: a coded index's token encoded with its tag (§24.2.6). */
static int encode_column(const ec_column *c, uint32_t v, uint32_t *raw) {
    if (c->kind != MANTRA_MD_COL_CODED || v == 0) {
        *raw = v;
        return MANTRA_OK;
    }
    const ec_coded_kind *k = &ec_coded[c->target];
    for (unsigned tag = 0; tag < k->ntags; tag++)
        if (k->tables[tag] == MANTRA_MD_TOKEN_TABLE(v)) {
            *raw = MANTRA_MD_TOKEN_ROW(v) << k->bits | tag;
            return MANTRA_OK;
        }
    return MANTRA_EINVAL; /* a token of a table the coded index cannot name */
}

static uint8_t *put_value(uint8_t *p, uint32_t v, uint8_t size) {
    return size == 2 ? cm_store_u16(p, (uint16_t)v) : cm_store_u32(p, v);
}

/* The #~ stream into out (NULL: only its size), padded to 4 bytes; its size, 0 with *rc on error. */
static size_t table_stream(const mantra_md_builder *b, uint8_t *out, int *rc) {
    uint8_t heap_sizes = (uint8_t)((b->strings.size > 0xFFFF ? EC_HEAP_STRINGS_4 : 0) |
                                   (b->guids.size / 16 > 0xFFFF ? EC_HEAP_GUID_4 : 0) |
                                   (b->blobs.size > 0xFFFF ? EC_HEAP_BLOB_4 : 0));
    uint64_t valid = 0;
    size_t size = 24;
    for (unsigned t = 0; t < MANTRA_MD_TABLES; t++)
        if (b->nrows[t]) {
            valid |= UINT64_C(1) << t;
            size += 4;
        }
    uint8_t col_size[MANTRA_MD_MAX_COLUMNS];
    for (unsigned t = 0; t < MANTRA_MD_TABLES; t++) {
        size_t row = 0;
        for (unsigned c = 0; c < ec_tables[t].ncolumns; c++)
            row += ec_column_size(b->nrows, heap_sizes, &ec_tables[t].columns[c]);
        size += row * b->nrows[t];
    }
    size = pad4(size);
    if (out == NULL)
        return size;
    memset(out, 0, size);
    uint8_t *p = out;
    p = cm_store_u32(p, 0);
    *p++ = 2; /* MajorVersion */
    *p++ = 0; /* MinorVersion */
    *p++ = heap_sizes;
    *p++ = 1; /* Reserved, always 1 */
    p = cm_store_u64(p, valid);
    p = cm_store_u64(p, SORTED_TABLES);
    for (unsigned t = 0; t < MANTRA_MD_TABLES; t++)
        if (b->nrows[t])
            p = cm_store_u32(p, b->nrows[t]);
    for (unsigned t = 0; t < MANTRA_MD_TABLES; t++) {
        const ec_table_schema *ts = &ec_tables[t];
        for (unsigned c = 0; c < ts->ncolumns; c++)
            col_size[c] = ec_column_size(b->nrows, heap_sizes, &ts->columns[c]);
        for (uint32_t r = 0; r < b->nrows[t]; r++) {
            const uint32_t *v = b->rows[t] + (size_t)r * ts->ncolumns;
            for (unsigned c = 0; c < ts->ncolumns; c++) {
                uint32_t raw = 0;
                if (encode_column(&ts->columns[c], v[c], &raw) != MANTRA_OK) {
                    *rc = MANTRA_EINVAL;
                    return 0;
                }
                if (col_size[c] == 2 && raw > 0xFFFF) {
                    *rc = MANTRA_ERANGE;
                    return 0;
                }
                p = put_value(p, raw, col_size[c]);
            }
        }
    }
    return size;
}

/* The stream headers: name (NUL-terminated, padded to 4) of each stream, in the order written. */
static const char *const stream_names[5] = {"#~", "#Strings", "#US", "#GUID", "#Blob"};

/* The metadata (root, stream headers, streams) into a new buffer. */
static int metadata(const mantra_md_builder *b, uint8_t **out, size_t *size) {
    int rc = MANTRA_OK;
    size_t tables = table_stream(b, NULL, &rc);
    const ec_buf *heaps[5] = {NULL, &b->strings, &b->user_strings, &b->guids, &b->blobs};
    size_t stream_size[5] = {tables, pad4(b->strings.size), pad4(b->user_strings.size), b->guids.size,
                             pad4(b->blobs.size)};
    size_t version_len = pad4(sizeof METADATA_VERSION); /* NUL included */
    size_t header = 16 + version_len + 4;
    for (int i = 0; i < 5; i++)
        header += 8 + pad4(strlen(stream_names[i]) + 1);
    size_t total = header;
    for (int i = 0; i < 5; i++)
        total += stream_size[i];
    uint8_t *m = calloc(1, total);
    if (m == NULL)
        return MANTRA_ENOMEM;
    uint8_t *p = m;
    p = cm_store_u32(p, 0x424A5342u); /* "BSJB" */
    p = cm_store_u16(p, 1);
    p = cm_store_u16(p, 1);
    p = cm_store_u32(p, 0);
    p = cm_store_u32(p, (uint32_t)version_len);
    memcpy(p, METADATA_VERSION, sizeof METADATA_VERSION);
    p += version_len;
    p = cm_store_u16(p, 0); /* Flags */
    p = cm_store_u16(p, 5);
    size_t at = header;
    for (int i = 0; i < 5; i++) {
        p = cm_store_u32(p, (uint32_t)at);
        p = cm_store_u32(p, (uint32_t)stream_size[i]);
        size_t n = strlen(stream_names[i]) + 1;
        memcpy(p, stream_names[i], n);
        p += pad4(n);
        at += stream_size[i];
    }
    at = header;
    for (int i = 0; i < 5; i++) {
        if (i == 0) {
            if (table_stream(b, m + at, &rc) == 0) {
                free(m);
                return rc;
            }
        } else if (heaps[i]->size) {
            memcpy(m + at, heaps[i]->data, heaps[i]->size);
        }
        at += stream_size[i];
    }
    *out = m;
    *size = total;
    return MANTRA_OK;
}

int mantra_md_write_pe(const mantra_md_builder *b, uint8_t **out, size_t *size) {
    if (b == NULL || out == NULL || size == NULL)
        return MANTRA_EINVAL;
    if (b->status != MANTRA_OK)
        return b->status;
    uint8_t *md = NULL;
    size_t md_size = 0;
    int rc = metadata(b, &md, &md_size);
    if (rc != MANTRA_OK)
        return rc;
    size_t md_at = pad4(EC_CLI_HEADER_SIZE + b->il.size); /* in .text */
    size_t text_size = md_at + md_size;
    size_t text_raw = (text_size + FILE_ALIGNMENT - 1) / FILE_ALIGNMENT * FILE_ALIGNMENT;
    if (text_size > 0x7FFFFFFFu - SECTION_ALIGNMENT) {
        free(md);
        return MANTRA_ERANGE;
    }
    uint8_t *f = calloc(1, FILE_ALIGNMENT + text_raw);
    if (f == NULL) {
        free(md);
        return MANTRA_ENOMEM;
    }
    /* MS-DOS header: "MZ" and the PE header's offset at 0x3C; its other bytes are zeros */
    f[0] = 'M';
    f[1] = 'Z';
    cm_store_u32(f + 0x3C, PE_OFFSET);
    uint8_t *p = f + PE_OFFSET;
    memcpy(p, "PE\0\0", 4);
    p += 4;
    /* COFF header: I386 (AnyCPU IL), 1 section, no time stamp, no symbols, PE32 optional header
     * (224 bytes), EXECUTABLE_IMAGE | LARGE_ADDRESS_AWARE | DLL */
    p = cm_store_u16(p, 0x014C);
    p = cm_store_u16(p, 1);
    p = cm_store_u32(p, 0);
    p = cm_store_u32(p, 0);
    p = cm_store_u32(p, 0);
    p = cm_store_u16(p, 224);
    p = cm_store_u16(p, 0x2022);
    uint8_t *opt = p;
    cm_store_u16(opt, 0x10B);
    opt[2] = 48; /* linker version 48.0 */
    cm_store_u32(opt + 4, (uint32_t)text_raw);                /* SizeOfCode */
    cm_store_u32(opt + 20, EC_TEXT_RVA);                      /* BaseOfCode */
    cm_store_u32(opt + 28, 0x10000000u);                      /* ImageBase */
    cm_store_u32(opt + 32, SECTION_ALIGNMENT);
    cm_store_u32(opt + 36, FILE_ALIGNMENT);
    cm_store_u16(opt + 40, 4);                                /* OS version 4.0 */
    cm_store_u16(opt + 48, 4);                                /* subsystem version 4.0 */
    cm_store_u32(opt + 56, (uint32_t)(EC_TEXT_RVA + (text_size + SECTION_ALIGNMENT - 1) / SECTION_ALIGNMENT *
                                                     SECTION_ALIGNMENT)); /* SizeOfImage */
    cm_store_u32(opt + 60, FILE_ALIGNMENT);                   /* SizeOfHeaders */
    cm_store_u16(opt + 68, 3);                                /* Subsystem: WINDOWS_CUI */
    cm_store_u16(opt + 70, 0x8540); /* DYNAMIC_BASE | NX_COMPAT | NO_SEH | TERMINAL_SERVER_AWARE */
    cm_store_u32(opt + 72, 0x100000);                         /* stack reserve, commit, heap reserve, commit */
    cm_store_u32(opt + 76, 0x1000);
    cm_store_u32(opt + 80, 0x100000);
    cm_store_u32(opt + 84, 0x1000);
    cm_store_u32(opt + 92, 16);                               /* NumberOfRvaAndSizes */
    cm_store_u32(opt + 96 + 8 * MANTRA_PE_DIR_CLI, EC_TEXT_RVA);
    cm_store_u32(opt + 96 + 8 * MANTRA_PE_DIR_CLI + 4, EC_CLI_HEADER_SIZE);
    uint8_t *sec = opt + 224;
    memcpy(sec, ".text", 5);
    cm_store_u32(sec + 8, (uint32_t)text_size);
    cm_store_u32(sec + 12, EC_TEXT_RVA);
    cm_store_u32(sec + 16, (uint32_t)text_raw);
    cm_store_u32(sec + 20, FILE_ALIGNMENT);
    cm_store_u32(sec + 36, 0x60000020u); /* CNT_CODE | MEM_EXECUTE | MEM_READ */
    uint8_t *text = f + FILE_ALIGNMENT;
    /* CLI header: cb, runtime 2.5, MetaData, Flags ILONLY, no entry point, no other directory */
    cm_store_u32(text, EC_CLI_HEADER_SIZE);
    cm_store_u16(text + 4, 2);
    cm_store_u16(text + 6, 5);
    cm_store_u32(text + 8, (uint32_t)(EC_TEXT_RVA + md_at));
    cm_store_u32(text + 12, (uint32_t)md_size);
    cm_store_u32(text + 16, 1);
    if (b->il.size)
        memcpy(text + EC_CLI_HEADER_SIZE, b->il.data, b->il.size);
    memcpy(text + md_at, md, md_size);
    free(md);
    *out = f;
    *size = FILE_ALIGNMENT + text_raw;
    return MANTRA_OK;
}
