/* The ZIP container of a .mibc: one entry, stored (compression method 0), as PKWARE's APPNOTE.TXT
 * lays out a local file header (4.3.7), the data, a central directory header (4.3.12) and the end
 * of central directory record (4.3.16). No time stamp (the DOS date 1980-01-01), so the same input
 * gives the same bytes. dotnet-pgo deflates its entry; readers (ZipArchive) take either. */
#include <stdlib.h>
#include <string.h>

#include "pgo_mibc.h"

uint32_t pgo_crc32(const uint8_t *data, size_t size) {
    static uint32_t table[256];
    static int ready;
    if (!ready) {
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++)
                c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            table[i] = c;
        }
        ready = 1;
    }
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < size; i++)
        c = table[(c ^ data[i]) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

static uint8_t *u16(uint8_t *p, uint16_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    return p + 2;
}

static uint8_t *u32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
    return p + 4;
}

/* The fields a local file header and a central directory header share, from "version needed":
 * version 2.0, no flags, stored, time 0, date 1980-01-01, CRC-32, both sizes, the name's length. */
static uint8_t *entry_fields(uint8_t *p, uint32_t crc, uint32_t size, uint16_t name) {
    p = u16(p, 20);
    p = u16(p, 0);
    p = u16(p, 0);
    p = u16(p, 0);
    p = u16(p, 0x21);
    p = u32(p, crc);
    p = u32(p, size);
    p = u32(p, size);
    return u16(p, name);
}

int pgo_zip_one(const char *entry, const uint8_t *data, size_t size, uint8_t **out, size_t *out_size) {
    size_t name = strlen(entry);
    if (size > 0xFFFFFFFEu || name > 0xFFFF)
        return -2;
    uint32_t crc = pgo_crc32(data, size);
    size_t total = 30 + name + size + 46 + name + 22;
    uint8_t *z = malloc(total), *p = z;
    if (z == NULL)
        return -2;
    p = u32(p, 0x04034b50u); /* local file header */
    p = entry_fields(p, crc, (uint32_t)size, (uint16_t)name);
    p = u16(p, 0); /* extra */
    memcpy(p, entry, name);
    p += name;
    memcpy(p, data, size);
    p += size;
    uint32_t cd_at = (uint32_t)(p - z);
    p = u32(p, 0x02014b50u); /* central directory header: version made by 2.0, then the shared fields */
    p = u16(p, 20);
    p = entry_fields(p, crc, (uint32_t)size, (uint16_t)name);
    p = u16(p, 0); /* extra */
    p = u16(p, 0); /* comment */
    p = u16(p, 0); /* disk */
    p = u16(p, 0); /* internal attributes */
    p = u32(p, 0); /* external attributes */
    p = u32(p, 0); /* the local header's offset */
    memcpy(p, entry, name);
    p += name;
    p = u32(p, 0x06054b50u); /* end of central directory: one entry on disk 0 */
    p = u16(p, 0);
    p = u16(p, 0);
    p = u16(p, 1);
    p = u16(p, 1);
    p = u32(p, (uint32_t)(46 + name));
    p = u32(p, cd_at);
    u16(p, 0);
    *out = z;
    *out_size = total;
    return 0;
}
