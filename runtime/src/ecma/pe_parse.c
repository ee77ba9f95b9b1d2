/* pe_parse.c - the headers of a PE/COFF file (ECMA-335 Partition II §25; the Microsoft PE/COFF
 * specification for the optional header's fields and data directories) and the CLI header
 * (§25.3.3). ReadyToRun images built for another OS than Windows XOR the COFF Machine field with
 * an OS value (dotnet/runtime src/coreclr/inc/pedecoder.h): mantra_pe gives both. */
#include <stdarg.h>
#include <stdio.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ecma-internal.h"
#include "mantra/decode.h" /* mantra_load_u16/u32/u64 */

int ec_fail(mantra_ecma_error *err, uint64_t offset, const char *fmt, ...) {
    if (err != NULL) {
        err->offset = offset;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return MANTRA_EFORMAT;
}

/* Machines a .NET image is built for (PE/COFF specification, IMAGE_FILE_MACHINE_*). */
static int known_machine(uint16_t m) {
    return m == 0x014C || m == 0x8664 || m == 0x01C4 || m == 0xAA64 || m == 0x6264 || m == 0x5064;
}

static void split_machine(mantra_pe *pe) {
    static const uint16_t os_values[] = {MANTRA_PE_OS_LINUX, MANTRA_PE_OS_APPLE, MANTRA_PE_OS_FREEBSD,
                                         MANTRA_PE_OS_NETBSD, MANTRA_PE_OS_SUNOS};
    pe->machine = pe->machine_raw;
    pe->os = MANTRA_PE_OS_WINDOWS;
    if (known_machine(pe->machine_raw))
        return;
    for (size_t i = 0; i < sizeof os_values / sizeof os_values[0]; i++)
        if (known_machine((uint16_t)(pe->machine_raw ^ os_values[i]))) {
            pe->machine = (uint16_t)(pe->machine_raw ^ os_values[i]);
            pe->os = os_values[i];
            return;
        }
}

int mantra_pe_rva_to_offset(const mantra_pe *pe, uint32_t rva, uint32_t size, size_t *offset) {
    for (uint32_t i = 0; pe != NULL && i < pe->nsections; i++) {
        const mantra_pe_section *s = &pe->sections[i];
        if (rva >= s->virtual_address && (uint64_t)rva + size <= (uint64_t)s->virtual_address + s->raw_size) {
            *offset = (size_t)s->raw_offset + (rva - s->virtual_address);
            return MANTRA_OK;
        }
    }
    return MANTRA_EFORMAT;
}

/* The CLI header (§25.3.3): 72 bytes at the RVA of data directory 14. */
static int parse_cli(mantra_pe *pe, mantra_ecma_error *err) {
    mantra_pe_dir d = pe->dirs[MANTRA_PE_DIR_CLI];
    size_t at;
    if (d.size < 72)
        return ec_fail(err, 0, "the CLI header directory is %u bytes, less than the 72 of a CLI header", d.size);
    if (mantra_pe_rva_to_offset(pe, d.rva, 72, &at) != MANTRA_OK)
        return ec_fail(err, 0, "the CLI header (RVA 0x%x) is not inside a section's bytes", d.rva);
    const uint8_t *p = pe->data + at;
    uint32_t cb = mantra_load_u32(p);
    if (cb < 72)
        return ec_fail(err, at, "the CLI header says it is %u bytes, less than 72", cb);
    pe->has_cli = 1;
    pe->cli_major = mantra_load_u16(p + 4);
    pe->cli_minor = mantra_load_u16(p + 6);
    pe->cli_metadata = (mantra_pe_dir){mantra_load_u32(p + 8), mantra_load_u32(p + 12)};
    pe->cli_flags = mantra_load_u32(p + 16);
    pe->cli_entry_point = mantra_load_u32(p + 20);
    pe->cli_resources = (mantra_pe_dir){mantra_load_u32(p + 24), mantra_load_u32(p + 28)};
    pe->cli_strong_name = (mantra_pe_dir){mantra_load_u32(p + 32), mantra_load_u32(p + 36)};
    pe->cli_managed_native_header = (mantra_pe_dir){mantra_load_u32(p + 64), mantra_load_u32(p + 68)};
    return MANTRA_OK;
}

int mantra_pe_parse(const uint8_t *data, size_t size, mantra_pe *pe, mantra_ecma_error *err) {
    if (pe == NULL || (data == NULL && size != 0))
        return MANTRA_EINVAL;
    memset(pe, 0, sizeof *pe);
    pe->data = data;
    pe->size = size;
    if (size < 0x40 || data[0] != 'M' || data[1] != 'Z')
        return ec_fail(err, 0, "not a PE file: no MS-DOS header (\"MZ\" and 64 bytes)");
    uint32_t pe_at = mantra_load_u32(data + 0x3C);
    if ((uint64_t)pe_at + 24 > size)
        return ec_fail(err, 0x3C, "the PE header offset 0x%x is past the end of the file (%zu bytes)", pe_at, size);
    if (memcmp(data + pe_at, "PE\0\0", 4) != 0)
        return ec_fail(err, pe_at, "no PE signature (\"PE\\0\\0\") where the MS-DOS header points");
    const uint8_t *coff = data + pe_at + 4;
    pe->machine_raw = mantra_load_u16(coff);
    split_machine(pe);
    uint16_t nsections = mantra_load_u16(coff + 2);
    uint16_t opt_size = mantra_load_u16(coff + 16);
    pe->characteristics = mantra_load_u16(coff + 18);
    uint64_t opt_at = (uint64_t)pe_at + 24;
    if (opt_at + opt_size > size)
        return ec_fail(err, pe_at + 20, "the optional header (%u bytes) ends past the end of the file", opt_size);
    if (opt_size < 2)
        return ec_fail(err, pe_at + 20, "no optional header (SizeOfOptionalHeader %u)", opt_size);
    const uint8_t *opt = data + opt_at;
    uint16_t magic = mantra_load_u16(opt);
    if (magic != 0x10B && magic != 0x20B)
        return ec_fail(err, opt_at, "optional header magic 0x%x is neither PE32 (0x10B) nor PE32+ (0x20B)", magic);
    pe->pe32_plus = magic == 0x20B;
    unsigned dirs_at = pe->pe32_plus ? 112 : 96;
    if (opt_size < dirs_at)
        return ec_fail(err, pe_at + 20, "the optional header is %u bytes, less than the %u of its fixed part", opt_size,
                       dirs_at);
    pe->image_base = pe->pe32_plus ? mantra_load_u64(opt + 24) : mantra_load_u32(opt + 28);
    pe->section_alignment = mantra_load_u32(opt + 32);
    pe->file_alignment = mantra_load_u32(opt + 36);
    pe->size_of_image = mantra_load_u32(opt + 56);
    uint32_t ndirs = mantra_load_u32(opt + dirs_at - 4);
    if ((uint64_t)dirs_at + (uint64_t)ndirs * 8 > opt_size)
        return ec_fail(err, opt_at + dirs_at - 4, "%u data directories do not fit the optional header (%u bytes)", ndirs,
                       opt_size);
    pe->ndirs = ndirs > 16 ? 16 : ndirs;
    for (uint32_t i = 0; i < pe->ndirs; i++)
        pe->dirs[i] = (mantra_pe_dir){mantra_load_u32(opt + dirs_at + 8 * i), mantra_load_u32(opt + dirs_at + 8 * i + 4)};
    uint64_t sec_at = opt_at + opt_size;
    if (nsections > 96)
        return ec_fail(err, pe_at + 6, "%u sections: the PE format allows at most 96", nsections);
    if (sec_at + (uint64_t)nsections * 40 > size)
        return ec_fail(err, sec_at, "the table of %u sections ends past the end of the file", nsections);
    pe->sections = nsections ? calloc(nsections, sizeof *pe->sections) : NULL;
    if (nsections && pe->sections == NULL)
        return MANTRA_ENOMEM;
    pe->nsections = nsections;
    for (uint32_t i = 0; i < nsections; i++) {
        const uint8_t *s = data + sec_at + 40 * i;
        mantra_pe_section *o = &pe->sections[i];
        memcpy(o->name, s, 8);
        o->virtual_size = mantra_load_u32(s + 8);
        o->virtual_address = mantra_load_u32(s + 12);
        o->raw_size = mantra_load_u32(s + 16);
        o->raw_offset = mantra_load_u32(s + 20);
        o->characteristics = mantra_load_u32(s + 36);
        if (o->raw_size && (uint64_t)o->raw_offset + o->raw_size > size) {
            int rc = ec_fail(err, sec_at + 40 * i + 16, "section %u (%s): its %u bytes at 0x%x end past the end of "
                             "the file (%zu bytes)", i, o->name, o->raw_size, o->raw_offset, size);
            mantra_pe_free(pe);
            return rc;
        }
    }
    /* sections lie in order and apart in the image (PE/COFF: "in ascending order of virtual
     * address", each up to its VirtualSize) */
    for (uint32_t i = 0; i + 1 < nsections; i++) {
        const mantra_pe_section *a = &pe->sections[i], *b = &pe->sections[i + 1];
        uint64_t a_end = (uint64_t)a->virtual_address + (a->virtual_size ? a->virtual_size : a->raw_size);
        if (a_end > b->virtual_address) {
            int rc = ec_fail(err, sec_at + 40 * (i + 1) + 12, "section %u (%s) at RVA 0x%x overlaps section %u (%s), "
                             "which runs to RVA 0x%" PRIx64, i + 1, b->name, b->virtual_address, i, a->name, a_end);
            mantra_pe_free(pe);
            return rc;
        }
    }
    if (pe->ndirs > MANTRA_PE_DIR_CLI && pe->dirs[MANTRA_PE_DIR_CLI].rva != 0) {
        int rc = parse_cli(pe, err);
        if (rc != MANTRA_OK) {
            mantra_pe_free(pe);
            return rc;
        }
    }
    return MANTRA_OK;
}

void mantra_pe_free(mantra_pe *pe) {
    if (pe == NULL)
        return;
    free(pe->sections);
    pe->sections = NULL;
    pe->nsections = 0;
}

int mantra_pe_codeview(const mantra_pe *pe, mantra_guid *guid, uint32_t *age, const char **path) {
    if (pe == NULL || guid == NULL)
        return MANTRA_EINVAL;
    if (pe->ndirs <= MANTRA_PE_DIR_DEBUG || pe->dirs[MANTRA_PE_DIR_DEBUG].size < 28)
        return MANTRA_ENOENT;
    mantra_pe_dir d = pe->dirs[MANTRA_PE_DIR_DEBUG];
    size_t at;
    if (mantra_pe_rva_to_offset(pe, d.rva, d.size, &at) != MANTRA_OK)
        return MANTRA_ENOENT;
    for (uint32_t i = 0; i + 28 <= d.size; i += 28) { /* IMAGE_DEBUG_DIRECTORY entries */
        const uint8_t *e = pe->data + at + i;
        uint32_t type = mantra_load_u32(e + 12), size = mantra_load_u32(e + 16), raw = mantra_load_u32(e + 24);
        if (type != 2 || size < 24 || (uint64_t)raw + size > pe->size)
            continue;
        const uint8_t *cv = pe->data + raw;
        if (memcmp(cv, "RSDS", 4) != 0)
            continue;
        guid->data1 = mantra_load_u32(cv + 4);
        guid->data2 = mantra_load_u16(cv + 8);
        guid->data3 = mantra_load_u16(cv + 10);
        memcpy(guid->data4, cv + 12, 8);
        if (age)
            *age = mantra_load_u32(cv + 20);
        if (path)
            *path = memchr(cv + 24, 0, size - 24) ? (const char *)cv + 24 : "";
        return MANTRA_OK;
    }
    return MANTRA_ENOENT;
}
