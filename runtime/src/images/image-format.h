/* image-format.h - the layout of a precompiled image, version 1.0 (docs/image-format.md is the
 * reference; every value little-endian). Private (prefix im_). */
#ifndef MANTRA_IMAGE_FORMAT_H
#define MANTRA_IMAGE_FORMAT_H

#include <stdint.h>

#include "common/le-internal.h"
#include "interp/interp-internal.h"
#include "mantra/image.h"

#define IM_MAGIC "MANTRAIM"
#define IM_MAJOR 1u
#define IM_MINOR 0u
#define IM_HEADER_SIZE 64u
#define IM_SECTION_SIZE 16u
#define IM_METHOD_SIZE 64u
#define IM_LITERAL_SIZE 8u
#define IM_MAP_SIZE 8u
#define IM_CODE_ALIGN 4096u /* the code sections start on their own pages */

/* header fields (offsets) */
enum {
    IM_H_MAGIC = 0,
    IM_H_MAJOR = 8,
    IM_H_MINOR = 10,
    IM_H_HEADER_SIZE = 12,
    IM_H_FILE_SIZE = 16,
    IM_H_CHECKSUM = 24,
    IM_H_SECTIONS = 28,
    IM_H_SECTION_TABLE = 32,
    IM_H_METHODS = 36,
    IM_H_GUID = 40,
    IM_H_MODULE_NAME = 56,
    IM_H_FLAGS = 60
};

/* section kinds: each exactly once */
enum { IM_SEC_STRINGS = 1, IM_SEC_METHODS = 2, IM_SEC_LITERALS = 3, IM_SEC_ILMAP = 4, IM_SEC_HOT = 5, IM_SEC_COLD = 6 };
#define IM_SECTION_KINDS 6u

/* method record fields (offsets) */
enum {
    IM_M_TOKEN = 0,
    IM_M_NAMESPACE = 4,
    IM_M_NAME = 8,
    IM_M_SIGNATURE = 12,
    IM_M_RET_TYPE = 16,
    IM_M_NARGS = 17,
    IM_M_NLOCALS = 18,
    IM_M_ARG_TYPES = 20,
    IM_M_MAX_STACK = 24,
    IM_M_IL_SIZE = 28,
    IM_M_HOT_RVA = 32,
    IM_M_HOT_SIZE = 36,
    IM_M_COLD_RVA = 40,
    IM_M_COLD_SIZE = 44,
    IM_M_MAP_FIRST = 48,
    IM_M_MAP_COUNT = 52,
    IM_M_FLAGS = 56,
    IM_M_RESERVED = 60
};

const char *im_section_name(uint32_t kind);

/* One section as the checks found it. */
typedef struct im_section {
    uint32_t offset, size;
} im_section;

/* What image_check.c learns of valid bytes (im_check fills it). */
typedef struct im_layout {
    const uint8_t *bytes;
    size_t size;
    im_section sec[IM_SECTION_KINDS + 1]; /* by kind */
    uint32_t nmethods, nliterals, nmap;
} im_layout;

/* Every check; 0, or MANTRA_EFORMAT with err filled (err may be NULL). */
int im_check(const uint8_t *bytes, size_t size, unsigned flags, im_layout *out, mantra_image_error *err);
/* image_verify.c: the instructions of method i (its record passed the table checks). */
int im_verify_method(const im_layout *l, uint32_t i, mantra_image_error *err);
/* A string of the heap (checked: NUL-terminated inside it). */
static inline const char *im_string(const im_layout *l, uint32_t off) {
    return (const char *)l->bytes + l->sec[IM_SEC_STRINGS].offset + off;
}
static inline const uint8_t *im_method_record(const im_layout *l, uint32_t i) {
    return l->bytes + l->sec[IM_SEC_METHODS].offset + (size_t)i * IM_METHOD_SIZE;
}
/* image_perfmap.c: method's perf map lines and jitdump records (MANTRA_PerfMapEnabled), at its first call. */
void im_perf_method(const mantra_image *im, size_t method);
int im_fail(mantra_image_error *err, uint64_t offset, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif /* MANTRA_IMAGE_FORMAT_H */
