/* Fuzz target: the PE/COFF and ECMA-335 metadata reader (mantra/ecma.h). The input is read as a PE
 * file and, when that fails, as bare metadata (from the first byte, or when a "BSJB" signature is
 * found, from there). Whatever opens is walked whole: every row of every table, every heap index
 * its columns hold, the names of every TypeDef and TypeRef, the owner of every method and the
 * enclosing type of every TypeDef; a ReadyToRun image's code ranges, embedded PGO entries and import
 * cells. Seeds: corpus/ecma (assemblies made by mantra's writer, and test_r2r's r2r.dll). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mantra/ecma.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint32_t sink;

static void walk(const mantra_md *md) {
    uint32_t v[MANTRA_MD_MAX_COLUMNS];
    char name[64];
    for (unsigned t = 0; t < MANTRA_MD_TABLES; t++) {
        uint32_t rows = mantra_md_row_count(md, t);
        for (uint32_t r = 1; r <= rows; r++) {
            if (mantra_md_row(md, t, r, v) != MANTRA_OK)
                abort(); /* every row was checked at open */
            for (unsigned c = 0; c < mantra_md_column_count(t); c++) {
                const uint8_t *b;
                uint32_t n;
                mantra_guid g;
                switch (mantra_md_column_kind(t, c)) {
                case MANTRA_MD_COL_STRING:
                    if (mantra_md_string(md, v[c]) == NULL)
                        abort();
                    sink += (uint32_t)strlen(mantra_md_string(md, v[c]));
                    break;
                case MANTRA_MD_COL_BLOB:
                    if (mantra_md_blob(md, v[c], &b, &n) != MANTRA_OK)
                        abort();
                    for (uint32_t i = 0; i < n; i++)
                        sink += b[i];
                    break;
                case MANTRA_MD_COL_GUID:
                    if (mantra_md_guid(md, v[c], &g) != MANTRA_OK)
                        abort();
                    sink += g.data1;
                    break;
                default:
                    sink += v[c];
                }
            }
            if (t == MANTRA_MD_TYPE_DEF || t == MANTRA_MD_TYPE_REF)
                sink += (uint32_t)mantra_md_type_name(md, MANTRA_MD_TOKEN(t, r), name, sizeof name);
            if (t == MANTRA_MD_TYPE_DEF)
                sink += mantra_md_enclosing_type(md, r);
            if (t == MANTRA_MD_METHOD_DEF)
                sink += mantra_md_method_owner(md, r);
        }
    }
    const uint8_t *u;
    uint32_t units;
    for (uint32_t i = 0; i < 64; i++)
        if (mantra_md_user_string(md, i, &u, &units) == MANTRA_OK && units)
            sink += u[0];
}

static int visit_pgo(void *ctx, const mantra_r2r_pgo_entry *e) {
    (void)ctx;
    sink += e->method.rid + e->version + (e->data_max ? e->data[0] : 0) + (e->data_max ? e->data[e->data_max - 1] : 0);
    return 0;
}

/* A ReadyToRun image: its header, code ranges, embedded PGO entries and import cells. */
static void walk_r2r(const mantra_pe *pe) {
    mantra_r2r r;
    mantra_ecma_error err;
    if (mantra_r2r_open(pe, &r, &err) != MANTRA_OK)
        return;
    if (mantra_r2r_code(pe, &r, &err) == MANTRA_OK)
        for (size_t i = 0; i < r.nmethods; i++)
            sink += r.methods[i].hot_rva + r.methods[i].cold_size;
    mantra_r2r_pgo_each(pe, &r, visit_pgo, NULL, &err);
    const uint8_t *sig;
    size_t max;
    for (uint32_t s = 0; s < 4; s++)
        for (uint32_t c = 0; c < 8; c++)
            if (mantra_r2r_import_signature(pe, &r, s, c, &sig, &max, &err) == MANTRA_OK)
                sink += sig[0] + sig[max - 1] + (uint32_t)mantra_r2r_type_sig_size(sig + 1, max - 1);
    mantra_r2r_free(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    mantra_pe pe;
    mantra_md *md = NULL;
    mantra_ecma_error err;
    if (mantra_pe_parse(data, size, &pe, &err) == MANTRA_OK) {
        size_t at;
        for (uint32_t i = 0; i < pe.nsections; i++)
            sink += mantra_pe_rva_to_offset(&pe, pe.sections[i].virtual_address, 4, &at) == MANTRA_OK ? (uint32_t)at : 0;
        if (mantra_md_open_pe(&pe, &md, &err) == MANTRA_OK) {
            walk(md);
            mantra_md_close(md);
        }
        walk_r2r(&pe);
        mantra_pe_free(&pe);
        return 0;
    }
    size_t from = 0;
    for (size_t i = 0; i + 4 <= size; i++)
        if (memcmp(data + i, "BSJB", 4) == 0) {
            from = i;
            break;
        }
    if (mantra_md_open(data + from, size - from, from, &md, &err) == MANTRA_OK) {
        walk(md);
        mantra_md_close(md);
    }
    return 0;
}
