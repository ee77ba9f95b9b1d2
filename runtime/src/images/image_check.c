/* image_check.c - every check an image passes before it runs, in file order: header (size, magic,
 * version, header size, file size (at most 4 GiB), checksum), section table (kinds, bounds,
 * overlaps), strings, literals, the method table (at least one method; names, types, code ranges,
 * IL maps) and, through image_verify.c, every instruction. The first failure is reported with its
 * file offset (docs/image-format.md). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "images/image-format.h"

int im_fail(mantra_image_error *err, uint64_t offset, const char *fmt, ...) {
    if (err != NULL) {
        err->offset = offset;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return MANTRA_EFORMAT;
}

const char *im_section_name(uint32_t kind) {
    static const char *const names[] = {"?", "strings", "methods", "literals", "IL map", "hot code", "cold code"};
    return kind <= IM_SECTION_KINDS ? names[kind] : "?";
}

static int check_header(const uint8_t *b, size_t size, unsigned flags, mantra_image_error *err) {
    if (size < IM_HEADER_SIZE)
        return im_fail(err, size, "truncated: %zu bytes, the header alone needs %u", size, IM_HEADER_SIZE);
    if (memcmp(b + IM_H_MAGIC, IM_MAGIC, 8) != 0)
        return im_fail(err, IM_H_MAGIC, "not a mantra image (no \"" IM_MAGIC "\" magic)");
    uint16_t major = mantra_load_u16(b + IM_H_MAJOR), minor = mantra_load_u16(b + IM_H_MINOR);
    if (major != IM_MAJOR)
        return im_fail(err, IM_H_MAJOR, "image format version %u.%u; this build reads version %u.x", major, minor,
                       IM_MAJOR);
    if (mantra_load_u32(b + IM_H_HEADER_SIZE) != IM_HEADER_SIZE)
        return im_fail(err, IM_H_HEADER_SIZE, "header size %u; version 1 headers are %u bytes",
                       mantra_load_u32(b + IM_H_HEADER_SIZE), IM_HEADER_SIZE);
    uint64_t fsize = mantra_load_u64(b + IM_H_FILE_SIZE);
    if (fsize != size)
        return im_fail(err, IM_H_FILE_SIZE, "%s: the header says %llu bytes, the file has %zu",
                       fsize > size ? "truncated" : "trailing bytes", (unsigned long long)fsize, size);
    if (fsize > UINT32_MAX) /* RVAs (and every offset of the tables) are 32-bit */
        return im_fail(err, IM_H_FILE_SIZE, "file size %llu: over the 4 GiB an image can have (its RVAs are 32-bit)",
                       (unsigned long long)fsize);
    if (!(flags & MANTRA_IMAGE_NO_CHECKSUM)) {
        static const uint8_t zero[4] = {0};
        uint32_t c = mantra_crc32(0, b, IM_H_CHECKSUM);
        c = mantra_crc32(c, zero, 4);
        c = mantra_crc32(c, b + IM_H_CHECKSUM + 4, size - IM_H_CHECKSUM - 4);
        uint32_t want = mantra_load_u32(b + IM_H_CHECKSUM);
        if (c != want)
            return im_fail(err, IM_H_CHECKSUM, "checksum mismatch: the header says 0x%08x, the bytes give 0x%08x "
                           "(the file is damaged)", want, c);
    }
    if (mantra_load_u32(b + IM_H_FLAGS) != 0)
        return im_fail(err, IM_H_FLAGS, "unknown header flags 0x%08x", mantra_load_u32(b + IM_H_FLAGS));
    return 0;
}

static int check_sections(const uint8_t *b, size_t size, im_layout *l, mantra_image_error *err) {
    uint32_t n = mantra_load_u32(b + IM_H_SECTIONS), at = mantra_load_u32(b + IM_H_SECTION_TABLE);
    if (n != IM_SECTION_KINDS)
        return im_fail(err, IM_H_SECTIONS, "%u sections; version 1 images have %u", n, IM_SECTION_KINDS);
    if (at < IM_HEADER_SIZE || (uint64_t)at + (uint64_t)n * IM_SECTION_SIZE > size)
        return im_fail(err, IM_H_SECTION_TABLE, "the section table (offset %u, %u entries) is out of the file's %zu bytes",
                       at, n, size);
    uint64_t table_end = (uint64_t)at + (uint64_t)n * IM_SECTION_SIZE;
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *e = b + at + (size_t)i * IM_SECTION_SIZE;
        uint64_t eo = (uint64_t)at + (uint64_t)i * IM_SECTION_SIZE;
        uint32_t kind = mantra_load_u32(e), off = mantra_load_u32(e + 4), sz = mantra_load_u32(e + 8);
        if (kind == 0 || kind > IM_SECTION_KINDS)
            return im_fail(err, eo, "section %u has unknown kind %u", i, kind);
        if (l->sec[kind].offset != 0)
            return im_fail(err, eo, "a second %s section", im_section_name(kind));
        if (mantra_load_u32(e + 12) != 0)
            return im_fail(err, eo + 12, "%s section: reserved field not 0", im_section_name(kind));
        if ((uint64_t)off + sz > size || off < table_end)
            return im_fail(err, eo + 4, "%s section (offset %u, %u bytes) is out of bounds (file %zu bytes, tables end at %llu)",
                           im_section_name(kind), off, sz, size, (unsigned long long)table_end);
        if ((kind == IM_SEC_HOT || kind == IM_SEC_COLD) && off % IM_CODE_ALIGN != 0)
            return im_fail(err, eo + 4, "%s section at offset %u is not %u-aligned", im_section_name(kind), off,
                           IM_CODE_ALIGN);
        l->sec[kind] = (im_section){off, sz};
    }
    /* no two sections share a byte */
    for (uint32_t a = 1; a <= IM_SECTION_KINDS; a++)
        for (uint32_t c = a + 1; c <= IM_SECTION_KINDS; c++) {
            const im_section *x = &l->sec[a], *y = &l->sec[c];
            if (x->size && y->size && x->offset < y->offset + y->size && y->offset < x->offset + x->size)
                return im_fail(err, at, "the %s and %s sections overlap", im_section_name(a), im_section_name(c));
        }
    return 0;
}

/* A string of the heap at off: inside it and NUL-terminated there. */
static int check_string(const im_layout *l, uint32_t off, uint64_t where, const char *what, mantra_image_error *err) {
    const im_section *s = &l->sec[IM_SEC_STRINGS];
    if (off >= s->size || memchr(l->bytes + s->offset + off, 0, s->size - off) == NULL)
        return im_fail(err, where, "%s: string offset %u is not a string of the %u-byte heap", what, off, s->size);
    return 0;
}

static int check_range(const im_layout *l, int kind, uint32_t rva, uint32_t size, uint64_t where, uint32_t mi,
                       const char *part, mantra_image_error *err) {
    const im_section *s = &l->sec[kind];
    if (rva < s->offset || (uint64_t)rva + size > (uint64_t)s->offset + s->size)
        return im_fail(err, where, "method %u: %s part (rva %u, %u bytes) is outside the %s section", mi, part, rva, size,
                       im_section_name((uint32_t)kind));
    return 0;
}

static int check_method(const im_layout *l, uint32_t i, mantra_image_error *err) {
    const uint8_t *r = im_method_record(l, i);
    uint64_t at = (uint64_t)l->sec[IM_SEC_METHODS].offset + (uint64_t)i * IM_METHOD_SIZE;
    int rc;
    if ((rc = check_string(l, mantra_load_u32(r + IM_M_NAMESPACE), at + IM_M_NAMESPACE, "method namespace", err)) ||
        (rc = check_string(l, mantra_load_u32(r + IM_M_NAME), at + IM_M_NAME, "method name", err)) ||
        (rc = check_string(l, mantra_load_u32(r + IM_M_SIGNATURE), at + IM_M_SIGNATURE, "method signature", err)))
        return rc;
    if (im_string(l, mantra_load_u32(r + IM_M_NAME))[0] == '\0')
        return im_fail(err, at + IM_M_NAME, "method %u has an empty name", i);
    if (r[IM_M_RET_TYPE] > IP_TYPE_F64)
        return im_fail(err, at + IM_M_RET_TYPE, "method %u: return type %u is not void, int64 or double", i,
                       r[IM_M_RET_TYPE]);
    uint32_t nargs = r[IM_M_NARGS], types = mantra_load_u32(r + IM_M_ARG_TYPES);
    const im_section *s = &l->sec[IM_SEC_STRINGS];
    if ((uint64_t)types + nargs > s->size)
        return im_fail(err, at + IM_M_ARG_TYPES, "method %u: argument types (offset %u, %u bytes) out of the string heap",
                       i, types, nargs);
    for (uint32_t k = 0; k < nargs; k++) {
        uint8_t t = l->bytes[s->offset + types + k];
        if (t != IP_TYPE_I64 && t != IP_TYPE_F64)
            return im_fail(err, (uint64_t)s->offset + types + k, "method %u: argument %u has type %u (not int64 or double)",
                           i, k, t);
    }
    uint32_t flags = mantra_load_u32(r + IM_M_FLAGS);
    if ((flags & ~(MANTRA_IMAGE_PLACED_COLD | MANTRA_IMAGE_ASYNC)) != 0 || mantra_load_u32(r + IM_M_RESERVED) != 0)
        return im_fail(err, at + IM_M_FLAGS, "method %u: unknown flags 0x%08x", i, flags);
    uint32_t hot = mantra_load_u32(r + IM_M_HOT_RVA), hsz = mantra_load_u32(r + IM_M_HOT_SIZE);
    uint32_t cold = mantra_load_u32(r + IM_M_COLD_RVA), csz = mantra_load_u32(r + IM_M_COLD_SIZE);
    if (hsz == 0)
        return im_fail(err, at + IM_M_HOT_SIZE, "method %u has no code (its entry part is empty)", i);
    if ((rc = check_range(l, (flags & MANTRA_IMAGE_PLACED_COLD) ? IM_SEC_COLD : IM_SEC_HOT, hot, hsz, at + IM_M_HOT_RVA,
                          i, "entry", err)))
        return rc;
    if (csz == 0 && cold != 0)
        return im_fail(err, at + IM_M_COLD_RVA, "method %u: a cold rva without a cold part", i);
    if (csz != 0 && (flags & MANTRA_IMAGE_PLACED_COLD))
        return im_fail(err, at + IM_M_COLD_SIZE, "method %u: placed cold whole, yet split", i);
    if (csz != 0 && (rc = check_range(l, IM_SEC_COLD, cold, csz, at + IM_M_COLD_RVA, i, "cold", err)))
        return rc;
    if ((uint64_t)hsz + csz > UINT32_MAX / 2)
        return im_fail(err, at + IM_M_HOT_SIZE, "method %u: code too large", i);
    uint32_t first = mantra_load_u32(r + IM_M_MAP_FIRST), count = mantra_load_u32(r + IM_M_MAP_COUNT);
    if (count == 0 || (uint64_t)first + count > l->nmap)
        return im_fail(err, at + IM_M_MAP_FIRST, "method %u: IL map entries %u..%llu out of the %u the map holds", i,
                       first, (unsigned long long)first + count, l->nmap);
    return im_verify_method(l, i, err);
}

/* Parts of different methods share no byte. */
typedef struct part_ref {
    uint32_t start, end, method;
} part_ref;

static int part_cmp(const void *a, const void *b) {
    const part_ref *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static int check_overlaps(const im_layout *l, mantra_image_error *err) {
    part_ref *p = malloc(((size_t)l->nmethods * 2 + 1) * sizeof *p);
    if (p == NULL)
        return MANTRA_ENOMEM;
    size_t n = 0;
    for (uint32_t i = 0; i < l->nmethods; i++) {
        const uint8_t *r = im_method_record(l, i);
        uint32_t h = mantra_load_u32(r + IM_M_HOT_RVA), c = mantra_load_u32(r + IM_M_COLD_RVA);
        p[n++] = (part_ref){h, h + mantra_load_u32(r + IM_M_HOT_SIZE), i};
        if (mantra_load_u32(r + IM_M_COLD_SIZE))
            p[n++] = (part_ref){c, c + mantra_load_u32(r + IM_M_COLD_SIZE), i};
    }
    qsort(p, n, sizeof *p, part_cmp);
    int rc = 0;
    for (size_t k = 1; k < n && rc == 0; k++)
        if (p[k].start < p[k - 1].end)
            rc = im_fail(err, p[k].start, "the code of methods %u and %u overlaps", p[k - 1].method, p[k].method);
    free(p);
    return rc;
}

int im_check(const uint8_t *b, size_t size, unsigned flags, im_layout *l, mantra_image_error *err) {
    memset(l, 0, sizeof *l);
    l->bytes = b;
    l->size = size;
    int rc;
    if ((rc = check_header(b, size, flags, err)) || (rc = check_sections(b, size, l, err)))
        return rc;
    const im_section *ms = &l->sec[IM_SEC_METHODS], *ls = &l->sec[IM_SEC_LITERALS], *mp = &l->sec[IM_SEC_ILMAP];
    l->nmethods = mantra_load_u32(b + IM_H_METHODS);
    if (l->nmethods == 0) /* the module's identity in events is its first method's */
        return im_fail(err, IM_H_METHODS, "no method: an image holds at least one");
    if ((uint64_t)l->nmethods * IM_METHOD_SIZE != ms->size)
        return im_fail(err, IM_H_METHODS, "%u methods do not fill the %u-byte method table (%u bytes each)", l->nmethods,
                       ms->size, IM_METHOD_SIZE);
    if (ls->size % IM_LITERAL_SIZE != 0 || mp->size % IM_MAP_SIZE != 0)
        return im_fail(err, ls->size % IM_LITERAL_SIZE ? ls->offset : mp->offset, "the %s section's size is not a multiple "
                       "of its %u-byte entries", ls->size % IM_LITERAL_SIZE ? "literals" : "IL map", IM_LITERAL_SIZE);
    l->nliterals = ls->size / IM_LITERAL_SIZE;
    l->nmap = mp->size / IM_MAP_SIZE;
    if (l->sec[IM_SEC_STRINGS].size == 0 || b[l->sec[IM_SEC_STRINGS].offset] != 0)
        return im_fail(err, l->sec[IM_SEC_STRINGS].offset, "the string heap does not start with the empty string");
    if ((rc = check_string(l, mantra_load_u32(b + IM_H_MODULE_NAME), IM_H_MODULE_NAME, "module name", err)))
        return rc;
    for (uint32_t k = 0; k < l->nliterals; k++) {
        const uint8_t *e = b + ls->offset + (size_t)k * IM_LITERAL_SIZE;
        if ((uint64_t)mantra_load_u32(e) + mantra_load_u32(e + 4) > l->sec[IM_SEC_STRINGS].size)
            return im_fail(err, (uint64_t)ls->offset + (uint64_t)k * IM_LITERAL_SIZE, "literal %u is out of the string heap",
                           k);
    }
    for (uint32_t i = 0; i < l->nmethods; i++)
        if ((rc = check_method(l, i, err)))
            return rc;
    return check_overlaps(l, err);
}

int mantra_image_check(const void *bytes, size_t size, unsigned flags, mantra_image_error *err) {
    if (bytes == NULL && size > 0)
        return MANTRA_EINVAL;
    im_layout l;
    return im_check(bytes, size, flags, &l, err);
}
