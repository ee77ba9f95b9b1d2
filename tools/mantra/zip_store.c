/* The ZIP container of a .mibc (PKWARE's APPNOTE.TXT): writing one entry, stored (compression
 * method 0): a local file header (4.3.7), the data, a central directory header (4.3.12) and the end
 * of central directory record (4.3.16), no time stamp (the DOS date 1980-01-01), so the same input
 * gives the same bytes; reading the entry a .mibc reader wants, stored or deflated (method 8, as
 * dotnet-pgo writes it), its CRC-32 checked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mantra/image.h"
#include "pgo_mibc.h"

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
    uint32_t crc = mantra_crc32(0, data, size);
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

static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t get32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

int pgo_zip_find(const uint8_t *zip, size_t size, const char *want, uint8_t **out, size_t *out_size, size_t *at,
                 const char **why) {
    static char msg[160];
    *why = msg;
    *out = NULL;
    /* the end of central directory record: 22 bytes and a comment of up to 65535 */
    size_t eocd = (size_t)-1;
    for (size_t i = size >= 22 ? size - 22 : 0; size >= 22; i--) {
        if (get32(zip + i) == 0x06054b50u && i + 22 + get16(zip + i + 20) == size) {
            eocd = i;
            break;
        }
        if (i == 0 || size - i > 22 + 0xFFFF)
            break;
    }
    if (eocd == (size_t)-1) {
        *at = size;
        snprintf(msg, sizeof msg, "no end of central directory record: not a ZIP archive, or a cut one");
        return -1;
    }
    uint16_t entries = get16(zip + eocd + 10);
    uint32_t cd_size = get32(zip + eocd + 12), cd_at = get32(zip + eocd + 16);
    if ((uint64_t)cd_at + cd_size > eocd) {
        *at = eocd + 16;
        snprintf(msg, sizeof msg, "the central directory (%u bytes at %u) runs past its end record", cd_size, cd_at);
        return -1;
    }
    size_t p = cd_at, found = (size_t)-1;
    for (uint16_t e = 0; e < entries; e++) {
        if (p + 46 > (size_t)cd_at + cd_size || get32(zip + p) != 0x02014b50u) {
            *at = p;
            snprintf(msg, sizeof msg, "central directory entry %u is not a file header", e);
            return -1;
        }
        size_t n = get16(zip + p + 28), extra = get16(zip + p + 30), comment = get16(zip + p + 32);
        if (p + 46 + n + extra + comment > (size_t)cd_at + cd_size) {
            *at = p;
            snprintf(msg, sizeof msg, "central directory entry %u runs past the directory", e);
            return -1;
        }
        int dll = n > 4 && memcmp(zip + p + 46 + n - 4, ".dll", 4) == 0;
        if ((want && strlen(want) == n && memcmp(zip + p + 46, want, n) == 0) || (found == (size_t)-1 && dll))
            found = p;
        if (want && strlen(want) == n && memcmp(zip + p + 46, want, n) == 0)
            break;
        p += 46 + n + extra + comment;
    }
    if (found == (size_t)-1) {
        *at = cd_at;
        snprintf(msg, sizeof msg, "no entry %s%s in the archive", want ? want : "", want ? " nor any .dll" : "*.dll");
        return -1;
    }
    uint16_t method = get16(zip + found + 10);
    uint32_t crc = get32(zip + found + 16), csize = get32(zip + found + 20), usize = get32(zip + found + 24);
    uint32_t local = get32(zip + found + 42);
    if ((uint64_t)local + 30 > size || get32(zip + local) != 0x04034b50u) {
        *at = found + 42;
        snprintf(msg, sizeof msg, "the entry's local header (at %u) is missing", local);
        return -1;
    }
    size_t data = (size_t)local + 30 + get16(zip + local + 26) + get16(zip + local + 28);
    if (data > size || csize > size - data) {
        *at = local;
        snprintf(msg, sizeof msg, "the entry's %u compressed bytes run past the archive", csize);
        return -1;
    }
    if (method != 0 && method != 8) {
        *at = found + 10;
        snprintf(msg, sizeof msg, "compression method %u (only 0, stored, and 8, deflate, are read)", method);
        return -1;
    }
    if (usize > (uint32_t)1 << 30) {
        *at = found + 24;
        snprintf(msg, sizeof msg, "an entry of %u bytes is larger than a profile can be", usize);
        return -1;
    }
    uint8_t *o = malloc(usize ? usize : 1);
    if (o == NULL)
        return -2;
    if (method == 0) {
        if (csize != usize) {
            free(o);
            *at = found + 20;
            snprintf(msg, sizeof msg, "a stored entry whose sizes differ (%u, %u)", csize, usize);
            return -1;
        }
        memcpy(o, zip + data, usize);
    } else {
        size_t stop;
        const char *w;
        if (pgo_inflate(zip + data, csize, o, usize, &stop, &w) < 0) {
            free(o);
            *at = data + stop;
            snprintf(msg, sizeof msg, "the deflated entry does not decode: %s", w);
            return -1;
        }
    }
    if (mantra_crc32(0, o, usize) != crc) {
        free(o);
        *at = found + 16;
        snprintf(msg, sizeof msg, "the entry's CRC-32 does not match its data");
        return -1;
    }
    *out = o;
    *out_size = usize;
    return 0;
}
