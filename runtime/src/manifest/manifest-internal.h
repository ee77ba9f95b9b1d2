/* manifest-internal.h - shared by the manifest loader, lookups and the decoder (never leaves src/). */
#ifndef MANTRA_MANIFEST_INTERNAL_H
#define MANTRA_MANIFEST_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "common/arena-internal.h"
#include "mantra/manifest.h"


struct mantra_manifest {
    cm_arena arena;
    const mantra_manifest_provider *providers;
    uint32_t provider_count;
    uint32_t event_count;
    const mantra_manifest_provider *const *by_name; /* sorted by strcmp(name) */
    const mantra_manifest_provider *const *by_guid; /* sorted by GUID bytes */
    const mantra_manifest_pgo_kind *pgo_kinds;
    uint32_t pgo_kind_count;
};

struct mantra_manifest_error {
    unsigned line;
    unsigned column;
    char *file;
    char *message;
    char *note; /* or NULL */
};

/* An error object (the static out-of-memory one when allocation fails); note may be NULL. */
mantra_manifest_error *mf_error_new(const char *file, unsigned line, unsigned column, const char *message,
                                    const char *note);
extern mantra_manifest_error mf_error_oom;


/* Byte order of a GUID as 16 bytes in the .NET layout (for sorting and comparing). */
void mf_guid_bytes(const mantra_guid *g, uint8_t out[16]);
int mf_guid_cmp(const mantra_guid *a, const mantra_guid *b);

/* Called by the loader once the providers are built: the lookup indexes. Returns 0 or -1 (no memory). */
int mf_build_indexes(mantra_manifest *m);

/* The manifest's field types (manifest.c): enum mantra_type value, manifest spelling, element bytes. */
typedef struct mf_type_info {
    uint16_t type;
    const char *name;
    uint8_t size;
} mf_type_info;
#define MF_FIELD_TYPE_COUNT 18u
extern const mf_type_info mf_field_types[MF_FIELD_TYPE_COUNT];
/* The entry of a manifest field type, or NULL. */
const mf_type_info *mf_type_info_of(int type);

#endif
