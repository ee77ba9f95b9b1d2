/* md_open.c - opening ECMA-335 metadata (Partition II §24): the metadata root and its stream
 * headers (§24.2.1-2), the heaps (§24.2.3-5) and the #~ (or uncompressed #-) table stream
 * (§24.2.6): row counts, index sizes, row layout. Every row of every table is checked here, so the
 * accessors (md_access.c) can trust a row once opened. */
#include <stdlib.h>
#include <string.h>

#include "ecma-internal.h"
#include "mantra/decode.h"

#define ROOT_SIGNATURE 0x424A5342u /* "BSJB" */

static uint64_t at_of(const mantra_md *md, const uint8_t *p) { return md->base_offset + (uint64_t)(p - md->data); }

/* The stream headers: offset, size, name (NUL-terminated, padded to 4 bytes, at most 32). */
static int read_streams(mantra_md *md, const uint8_t *p, uint16_t nstreams, mantra_ecma_error *err) {
    const uint8_t *end = md->data + md->size;
    int have_tables = 0;
    for (uint16_t i = 0; i < nstreams; i++) {
        if (end - p < 8)
            return ec_fail(err, at_of(md, p), "stream header %u of %u is past the end of the metadata", i, nstreams);
        uint32_t off = mantra_load_u32(p), size = mantra_load_u32(p + 4);
        const uint8_t *name = p + 8;
        size_t max = (size_t)(end - name) < 32 ? (size_t)(end - name) : 32;
        const uint8_t *nul = memchr(name, 0, max);
        if (nul == NULL)
            return ec_fail(err, at_of(md, name), "stream header %u: its name has no NUL within 32 bytes", i);
        size_t padded = ((size_t)(nul - name) + 1 + 3) & ~(size_t)3;
        if (padded > (size_t)(end - name))
            return ec_fail(err, at_of(md, name), "stream header %u: its padded name ends past the metadata", i);
        if ((uint64_t)off + size > md->size)
            return ec_fail(err, at_of(md, p), "stream %s: %u bytes at offset %u end past the metadata (%zu bytes)",
                           (const char *)name, size, off, md->size);
        ec_heap h = {md->data + off, size, off};
        ec_heap *slot = NULL;
        const char *n = (const char *)name;
        if (strcmp(n, "#~") == 0 || strcmp(n, "#-") == 0) {
            slot = &md->tables_stream;
            have_tables++;
        } else if (strcmp(n, "#Strings") == 0)
            slot = &md->strings;
        else if (strcmp(n, "#US") == 0)
            slot = &md->user_strings;
        else if (strcmp(n, "#Blob") == 0)
            slot = &md->blobs;
        else if (strcmp(n, "#GUID") == 0)
            slot = &md->guids;
        if (slot != NULL) {
            if (slot->data != NULL || have_tables > 1)
                return ec_fail(err, at_of(md, p), "stream %s appears twice", n);
            *slot = h;
        }
        p = name + padded;
    }
    if (md->tables_stream.data == NULL)
        return ec_fail(err, at_of(md, p), "no table stream (#~ or #-)");
    if (md->strings.size && md->strings.data[md->strings.size - 1] != 0)
        return ec_fail(err, md->base_offset + md->strings.offset + md->strings.size - 1,
                       "the #Strings heap does not end with a NUL");
    return MANTRA_OK;
}

/* A blob at index of heap h (#Blob or #US): 0 with its bytes, or -1 when it does not fit. */
int ec_heap_blob(const ec_heap *h, uint32_t index, const uint8_t **data, uint32_t *size) {
    if (index == 0) { /* the empty entry, whatever the heap's first byte says */
        *data = NULL;
        *size = 0;
        return 0;
    }
    if (index >= h->size)
        return -1;
    uint32_t len;
    size_t n = mantra_md_uncompress(h->data + index, h->size - index, &len);
    if (n == 0 || len > h->size - index - n)
        return -1;
    *data = h->data + index + n;
    *size = len;
    return 0;
}

/* Is the column a list (a run of rows of its table starting there, which may be one past the last)? */
static int is_list(const ec_column *c) {
    size_t n = strlen(c->name);
    return n > 4 && strcmp(c->name + n - 4, "List") == 0;
}

static int check_column(const mantra_md *md, unsigned t, uint32_t row, const uint8_t *p, unsigned c,
                        mantra_ecma_error *err) {
    const ec_column *col = &ec_tables[t].columns[c];
    uint32_t v = ec_column_raw(md, t, p, c);
    uint64_t at = at_of(md, p + md->col_offset[t][c]);
    const char *tn = ec_tables[t].name;
    const uint8_t *d;
    uint32_t n;
    switch (col->kind) {
    case MANTRA_MD_COL_STRING:
        if (v != 0 && v >= md->strings.size)
            return ec_fail(err, at, "%s row %u, %s: string index %u is past the #Strings heap (%u bytes)", tn, row,
                           col->name, v, md->strings.size);
        return MANTRA_OK;
    case MANTRA_MD_COL_GUID:
        if (v > md->guids.size / 16)
            return ec_fail(err, at, "%s row %u, %s: GUID index %u is past the #GUID heap (%u GUIDs)", tn, row, col->name,
                           v, md->guids.size / 16);
        return MANTRA_OK;
    case MANTRA_MD_COL_BLOB:
        if (v != 0 && ec_heap_blob(&md->blobs, v, &d, &n) < 0)
            return ec_fail(err, at, "%s row %u, %s: blob index %u: no blob of that length inside the #Blob heap "
                           "(%u bytes)", tn, row, col->name, v, md->blobs.size);
        return MANTRA_OK;
    case MANTRA_MD_COL_INDEX: {
        uint32_t rows = md->rows[col->target];
        if (is_list(col) ? v > rows + 1 || v == 0 : v > rows || v == 0)
            return ec_fail(err, at, "%s row %u, %s: row %u of %s, which has %u rows", tn, row, col->name, v,
                           ec_tables[col->target].name, rows);
        return MANTRA_OK;
    }
    case MANTRA_MD_COL_CODED: {
        const ec_coded_kind *k = &ec_coded[col->target];
        uint32_t tag = v & ((1u << k->bits) - 1), rid = v >> k->bits;
        if (v == 0)
            return MANTRA_OK;
        if (tag >= k->ntags || k->tables[tag] == EC_NO_TABLE)
            return ec_fail(err, at, "%s row %u, %s: coded index 0x%x has tag %u, which names no table", tn, row,
                           col->name, v, tag);
        if (rid > md->rows[k->tables[tag]])
            return ec_fail(err, at, "%s row %u, %s: row %u of %s, which has %u rows", tn, row, col->name, rid,
                           ec_tables[k->tables[tag]].name, md->rows[k->tables[tag]]);
        return MANTRA_OK;
    }
    default:
        return MANTRA_OK;
    }
}

static int read_tables(mantra_md *md, mantra_ecma_error *err) {
    const ec_heap *s = &md->tables_stream;
    const uint8_t *p = s->data, *end = s->data + s->size;
    if (s->size < 24)
        return ec_fail(err, md->base_offset + s->offset, "the table stream is %u bytes, less than its 24-byte header",
                       s->size);
    uint8_t heap_sizes = p[6];
    uint64_t valid = mantra_load_u64(p + 8);
    md->sorted = mantra_load_u64(p + 16);
    p += 24;
    for (unsigned t = 0; t < 64; t++) {
        if (!(valid >> t & 1))
            continue;
        if (t >= MANTRA_MD_TABLES)
            return ec_fail(err, md->base_offset + s->offset + 8, "the table stream has table 0x%02x, which is not a "
                           "table of an assembly's metadata (ECMA-335 defines 0x00-0x2c)", t);
        if (end - p < 4)
            return ec_fail(err, at_of(md, p), "the row counts end past the table stream");
        md->rows[t] = mantra_load_u32(p);
        if (md->rows[t] > 0xFFFFFF)
            return ec_fail(err, at_of(md, p), "%s has %u rows, more than a token can name (0xFFFFFF)",
                           ec_tables[t].name, md->rows[t]);
        p += 4;
    }
    if (heap_sizes & 0x40) /* an extra 4 bytes after the row counts */
        p += 4;
    for (unsigned t = 0; t < MANTRA_MD_TABLES; t++) {
        const ec_table_schema *ts = &ec_tables[t];
        unsigned off = 0;
        for (unsigned c = 0; c < ts->ncolumns; c++) {
            md->col_offset[t][c] = (uint8_t)off;
            md->col_size[t][c] = ec_column_size(md->rows, heap_sizes, &ts->columns[c]);
            off += md->col_size[t][c];
        }
        md->row_size[t] = (uint8_t)off;
    }
    for (unsigned t = 0; t < MANTRA_MD_TABLES; t++) {
        if (md->rows[t] == 0)
            continue;
        uint64_t bytes = (uint64_t)md->rows[t] * md->row_size[t];
        if (p > end || bytes > (uint64_t)(end - p))
            return ec_fail(err, at_of(md, p < end ? p : end), "%s: %u rows of %u bytes end past the table stream",
                           ec_tables[t].name, md->rows[t], md->row_size[t]);
        md->table_data[t] = p;
        p += bytes;
    }
    for (unsigned t = 0; t < MANTRA_MD_TABLES; t++)
        for (uint32_t r = 0; r < md->rows[t]; r++) {
            const uint8_t *row = md->table_data[t] + (size_t)r * md->row_size[t];
            for (unsigned c = 0; c < ec_tables[t].ncolumns; c++) {
                int rc = check_column(md, t, r + 1, row, c, err);
                if (rc != MANTRA_OK)
                    return rc;
            }
        }
    return MANTRA_OK;
}

int mantra_md_open(const uint8_t *data, size_t size, uint64_t base_offset, mantra_md **out, mantra_ecma_error *err) {
    if (out == NULL || (data == NULL && size != 0))
        return MANTRA_EINVAL;
    *out = NULL;
    if (size < 20 || mantra_load_u32(data) != ROOT_SIGNATURE)
        return ec_fail(err, base_offset, "no metadata root signature (0x424A5342, \"BSJB\")");
    mantra_md *md = calloc(1, sizeof *md);
    if (md == NULL)
        return MANTRA_ENOMEM;
    md->data = data;
    md->size = size;
    md->base_offset = base_offset;
    uint32_t vlen = mantra_load_u32(data + 12);
    int rc;
    if ((uint64_t)vlen + 20 > size) {
        rc = ec_fail(err, base_offset + 12, "the version string (%u bytes) ends past the metadata (%zu bytes)", vlen,
                     size);
    } else {
        size_t n = vlen < sizeof md->version - 1 ? vlen : sizeof md->version - 1;
        memcpy(md->version, data + 16, n);
        md->version[n] = '\0';
        uint16_t nstreams = mantra_load_u16(data + 16 + vlen + 2);
        rc = read_streams(md, data + 20 + vlen, nstreams, err);
        if (rc == MANTRA_OK)
            rc = read_tables(md, err);
    }
    if (rc != MANTRA_OK) {
        free(md);
        return rc;
    }
    *out = md;
    return MANTRA_OK;
}

int mantra_md_open_pe(const mantra_pe *pe, mantra_md **out, mantra_ecma_error *err) {
    size_t at;
    if (pe == NULL || out == NULL)
        return MANTRA_EINVAL;
    *out = NULL;
    if (!pe->has_cli)
        return ec_fail(err, 0, "the PE file has no CLI header: not a .NET assembly");
    if (mantra_pe_rva_to_offset(pe, pe->cli_metadata.rva, pe->cli_metadata.size, &at) != MANTRA_OK)
        return ec_fail(err, 0, "the metadata (RVA 0x%x, %u bytes) is not inside a section's bytes", pe->cli_metadata.rva,
                       pe->cli_metadata.size);
    return mantra_md_open(pe->data + at, pe->cli_metadata.size, at, out, err);
}

void mantra_md_close(mantra_md *md) { free(md); }
