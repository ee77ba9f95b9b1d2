/* r2r_pgo.c - the PGO data crossgen2 embeds in a ReadyToRun image (--embed-pgo-data) and the import
 * cells its type handles name (mantra/ecma.h). Section 117 is a NativeHashtable
 * (InstrumentationDataTableNode.cs); an entry is a method signature, then a native integer
 * (version << 2) | 3 followed by a back offset from that offset field to the data (shared data), or
 * (version << 2) | 1 followed by the data itself (PgoInstrumentedDataVertex, NativeFormatWriter.cs).
 * Section 101 is an array of READYTORUN_IMPORT_SECTION { IMAGE_DATA_DIRECTORY Section; u16 Flags;
 * u8 Type; u8 EntrySize; u32 Signatures; u32 AuxiliaryData } (readytorun.h), Signatures the RVA of
 * one u32 signature RVA per cell. */
#include <string.h>

#include "ecma-internal.h"
#include "mantra/decode.h"

#define IMPORT_SECTION_SIZE 20

int mantra_r2r_import_signature(const mantra_pe *pe, const mantra_r2r *r, uint32_t section, uint32_t index,
                                const uint8_t **sig, size_t *max, mantra_ecma_error *err) {
    const uint8_t *tab;
    uint32_t size;
    int rc = mantra_r2r_section_bytes(pe, r, MANTRA_R2R_IMPORT_SECTIONS, &tab, &size, err);
    if (rc < 0)
        return rc;
    if (rc == 0 || section >= size / IMPORT_SECTION_SIZE)
        return MANTRA_ENOENT;
    const uint8_t *s = tab + (size_t)section * IMPORT_SECTION_SIZE;
    uint32_t cells = mantra_load_u32(s + 4), entry_size = s[11], sigs = mantra_load_u32(s + 12);
    if (entry_size == 0 || sigs == 0 || index >= cells / entry_size)
        return MANTRA_ENOENT;
    size_t at;
    if (mantra_pe_rva_to_offset(pe, sigs + 4 * index, 4, &at) != MANTRA_OK)
        return ec_fail(err, (uint64_t)(s - pe->data), "import section %u: its signature array (RVA 0x%x) is not "
                       "inside a section's bytes", section, sigs);
    uint32_t rva = mantra_load_u32(pe->data + at);
    size_t sat;
    if (mantra_pe_rva_to_offset(pe, rva, 1, &sat) != MANTRA_OK)
        return ec_fail(err, at, "import section %u, cell %u: its signature (RVA 0x%x) is not inside a section's bytes",
                       section, index, rva);
    /* the signature runs at most to the end of the PE section that holds it */
    size_t end = sat + 1;
    for (uint32_t i = 0; i < pe->nsections; i++) {
        const mantra_pe_section *ps = &pe->sections[i];
        if (sat >= ps->raw_offset && sat < (size_t)ps->raw_offset + ps->raw_size)
            end = (size_t)ps->raw_offset + ps->raw_size;
    }
    *sig = pe->data + sat;
    *max = (end > pe->size ? pe->size : end) - sat;
    return MANTRA_OK;
}

typedef struct pgo_walk {
    const uint8_t *blob;
    uint32_t size;
    uint64_t at;
    int (*fn)(void *ctx, const mantra_r2r_pgo_entry *e);
    void *ctx;
    mantra_ecma_error *err;
} pgo_walk;

static int pgo_entry(void *ctx, uint32_t entry) {
    pgo_walk *w = ctx;
    mantra_r2r_pgo_entry e;
    memset(&e, 0, sizeof e);
    e.at = w->at + entry;
    size_t k = mantra_r2r_method_sig_parse(w->blob + entry, w->size - entry, &e.method);
    if (k == 0)
        return ec_fail(w->err, e.at, "PgoInstrumentationData: an entry's method signature is malformed");
    uint64_t p = entry + k;
    uint32_t v, back;
    uint32_t n = p < w->size ? ec_native_uint(w->blob + p, (size_t)(w->size - p), &v) : 0;
    if (n == 0)
        return ec_fail(w->err, w->at + p, "PgoInstrumentationData: an entry ends after its method signature");
    p += n;
    e.version = v >> 2;
    uint64_t data;
    if ((v & 3) == 3) { /* shared data: a back offset from this field */
        n = p < w->size ? ec_native_uint(w->blob + p, (size_t)(w->size - p), &back) : 0;
        if (n == 0 || back > p)
            return ec_fail(w->err, w->at + p, "PgoInstrumentationData: an entry's data offset is missing or points "
                           "before the section");
        data = p - back;
    } else if ((v & 3) == 1) {
        data = p;
    } else {
        return ec_fail(w->err, w->at + p - n, "PgoInstrumentationData: an entry's data kind %u is neither 1 (in "
                       "place) nor 3 (shared)", v & 3);
    }
    if (data >= w->size)
        return ec_fail(w->err, w->at + p, "PgoInstrumentationData: an entry's data is past the section");
    e.data = w->blob + data;
    e.data_max = (size_t)(w->size - data);
    return w->fn(w->ctx, &e);
}

int mantra_r2r_pgo_each(const mantra_pe *pe, const mantra_r2r *r, int (*fn)(void *ctx, const mantra_r2r_pgo_entry *e),
                        void *ctx, mantra_ecma_error *err) {
    const uint8_t *blob;
    uint32_t size;
    int rc = mantra_r2r_section_bytes(pe, r, MANTRA_R2R_PGO_INSTRUMENTATION_DATA, &blob, &size, err);
    if (rc <= 0)
        return rc;
    pgo_walk w = {blob, size, (uint64_t)(blob - pe->data), fn, ctx, err};
    return ec_native_hashtable_each(blob, size, w.at, "PgoInstrumentationData", pgo_entry, &w, err);
}
