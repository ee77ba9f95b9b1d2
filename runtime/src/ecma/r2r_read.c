/* r2r_read.c - the ReadyToRun header of a precompiled assembly and its section list (mantra/ecma.h
 * "ReadyToRun"): READYTORUN_HEADER { u32 Signature "RTR"; u16 Major, Minor; u32 Flags; u32
 * NumberOfSections } then READYTORUN_SECTION { u32 Type; IMAGE_DATA_DIRECTORY } (readytorun.h),
 * found through the CLI header's ManagedNativeHeader (../shared/reference/r2r-and-symbols.md §2.2). */
#include <stdlib.h>
#include <string.h>

#include "ecma-internal.h"
#include "mantra/decode.h"

#define RTR_SIGNATURE 0x00525452u /* "RTR" */
#define MAJOR_MIN 9               /* the layout of the sections read here since 9.0 (.NET 8) */
#define MAJOR_MAX 16              /* what .NET 10 writes */

int mantra_r2r_open(const mantra_pe *pe, mantra_r2r *r, mantra_ecma_error *err) {
    if (pe == NULL || r == NULL)
        return MANTRA_EINVAL;
    memset(r, 0, sizeof *r);
    if (!pe->has_cli || pe->cli_managed_native_header.rva == 0)
        return MANTRA_ENOENT;
    size_t at;
    if (mantra_pe_rva_to_offset(pe, pe->cli_managed_native_header.rva, 16, &at) != MANTRA_OK)
        return ec_fail(err, 0, "the ReadyToRun header (RVA 0x%x) is not inside a section's bytes",
                       pe->cli_managed_native_header.rva);
    const uint8_t *h = pe->data + at;
    if (mantra_load_u32(h) != RTR_SIGNATURE)
        return ec_fail(err, at, "the managed native header is not a ReadyToRun header (no \"RTR\" signature)");
    r->major = mantra_load_u16(h + 4);
    r->minor = mantra_load_u16(h + 6);
    r->flags = mantra_load_u32(h + 8);
    if (r->major < MAJOR_MIN || r->major > MAJOR_MAX) {
        ec_fail(err, at + 4, "ReadyToRun version %u.%u is not one this reader knows (%d.0 to %d.x)", r->major, r->minor,
                MAJOR_MIN, MAJOR_MAX);
        return MANTRA_EUNSUPPORTED;
    }
    uint32_t n = mantra_load_u32(h + 12);
    if (n > 1024 || (uint64_t)at + 16 + (uint64_t)n * 12 > pe->size)
        return ec_fail(err, at + 12, "%u ReadyToRun sections run past the file", n);
    r->sections = calloc(n ? n : 1, sizeof *r->sections);
    if (r->sections == NULL)
        return MANTRA_ENOMEM;
    r->nsections = n;
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *s = h + 16 + 12 * i;
        r->sections[i] = (mantra_r2r_section){mantra_load_u32(s), mantra_load_u32(s + 4), mantra_load_u32(s + 8)};
    }
    return MANTRA_OK;
}

int mantra_r2r_section_bytes(const mantra_pe *pe, const mantra_r2r *r, uint32_t type, const uint8_t **data,
                             uint32_t *size, mantra_ecma_error *err) {
    *data = NULL;
    *size = 0;
    for (uint32_t i = 0; i < r->nsections; i++)
        if (r->sections[i].type == type) {
            size_t at;
            if (mantra_pe_rva_to_offset(pe, r->sections[i].rva, r->sections[i].size, &at) != MANTRA_OK)
                return ec_fail(err, 0, "ReadyToRun section %u (RVA 0x%x, %u bytes) is not inside a section's bytes",
                               type, r->sections[i].rva, r->sections[i].size);
            *data = pe->data + at;
            *size = r->sections[i].size;
            return 1;
        }
    return 0;
}

void mantra_r2r_free(mantra_r2r *r) {
    if (r == NULL)
        return;
    free(r->sections);
    free(r->methods);
    memset(r, 0, sizeof *r);
}
