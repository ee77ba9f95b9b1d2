/* mantra/manifest.h - event manifests loaded at run time, and payload decoding driven by them.
 *
 * A reader that meets events without self-describing metadata (the .NET runtime writes its own
 * providers' events with empty metadata) needs the manifest to show their fields. This loader reads
 * the YAML spelling of a manifest (docs/manifest.md: what `mantra-gen --emit-yaml` prints, so an
 * ETW manifest such as ClrEtwAll.man becomes usable with one command) into a compact, immutable
 * form: providers, keywords, maps, templates with typed fields and events by (id, version).
 *
 *     mantra_manifest_error *err = NULL;
 *     mantra_manifest *m = mantra_manifest_load_file("clr.yaml", &err);
 *     if (!m) { char buf[512]; mantra_manifest_error_format(err, buf, sizeof buf); ...;
 *               mantra_manifest_error_free(err); }
 *     const mantra_manifest_provider *p = mantra_manifest_find_provider(m, "Microsoft-Windows-DotNETRuntime");
 *     const mantra_manifest_event *e = mantra_manifest_find_event(p, 143, 2);
 *     mantra_manifest_decode(e->tpl, payload, size, 8, &my_visitor, ctx, NULL);
 *     mantra_manifest_free(m);
 *
 * Everything a loaded manifest hands out (structs, strings) lives in the manifest's arena and stays
 * valid until mantra_manifest_free(). A loaded manifest is never modified, so any number of threads
 * may use it at once. The loader needs libyaml; a libmantra built without it still has these
 * functions, and the loaders return an error saying so (see mantra_manifest_supported()).
 *
 * What the loader checks: the YAML spelling (syntax, shape, unknown/missing/duplicate keys, numbers,
 * level and type names) and what a decoder or a lookup relies on: unique provider names and GUIDs,
 * unique (id, version) per provider, defined keywords/tasks/opcodes/maps/templates, unique names of
 * those and of fields, value ranges, and payload shapes (`length` only and always on Binary, `count`
 * only on fixed-size scalars and structs, a named count/length is an earlier integer non-array field
 * of the same template or struct, no structs in structs). It does not check what only matters to
 * generated C (identifiers, generated-name collisions, keyword masks being single bits, the sizes
 * of pgo kinds against their element types): use `mantra-gen` for that. The first problem found is
 * reported.
 */
#ifndef MANTRA_MANIFEST_H
#define MANTRA_MANIFEST_H

#include <stddef.h>
#include <stdint.h>

#include "mantra/decode.h"
#include "mantra/event.h"
#include "mantra/status.h"
#include "mantra/types.h"
#include "mantra/visit.h"

MANTRA_BEGIN_DECLS

/* ---- field types --------------------------------------------------------------------------- */

/* A field's type is an enum mantra_type (mantra/types.h). The canonical field types of
 * docs/manifest.md (generator/mantra_gen/model.py FIELD_TYPES) are, in manifest spelling:
 *   Int8 SBYTE, UInt8 BYTE, Int16 INT16, UInt16 UINT16, Int32 INT32, UInt32 UINT32, Int64 INT64,
 *   UInt64 UINT64, Float SINGLE, Double DOUBLE, Boolean BOOLEAN (4 bytes), GUID GUID (16 bytes, .NET
 *   layout), Pointer POINTER (the trace's pointer size), FILETIME DATETIME (8 bytes: 100 ns ticks since
 *   1601), UnicodeString STRING (UTF-16LE + NUL), AnsiString STRING8 (bytes + NUL), Binary BINARY
 *   (`length` raw bytes), struct OBJECT (`count` elements of `members`).
 * mantra_manifest_type_name() gives that spelling ("Int8", ..., "struct"); "?" for other types. */
const char *mantra_manifest_type_name(int type);

/* How a field's count or length is given. */
enum mantra_manifest_ref_kind {
    MANTRA_MANIFEST_REF_NONE = 0,  /* no count (a single value) / no length */
    MANTRA_MANIFEST_REF_FIXED = 1, /* a number (>= 1; a count of 1 is stored as NONE) */
    MANTRA_MANIFEST_REF_FIELD = 2  /* the value of an earlier sibling field: `count`/`length` is its index */
};

/* ---- the loaded form ----------------------------------------------------------------------- */

typedef struct mantra_manifest mantra_manifest;             /* opaque */
typedef struct mantra_manifest_error mantra_manifest_error; /* opaque */

typedef struct mantra_manifest_map_entry {
    uint64_t value;
    const char *message;
} mantra_manifest_map_entry;

typedef struct mantra_manifest_map {
    const char *name;
    const mantra_manifest_map_entry *entries; /* sorted by value, values unique */
    uint32_t entry_count;
    uint8_t is_bitmap;                        /* kind: bitmap (1) or value (0) */
} mantra_manifest_map;

typedef struct mantra_manifest_field mantra_manifest_field;
struct mantra_manifest_field {
    const char *name;
    const char *out_type;               /* ETW outType as written (e.g. "win:HexInt64"), or NULL */
    const mantra_manifest_map *map;     /* value or bit map of an integer field, or NULL */
    const mantra_manifest_field *members; /* struct members (type STRUCT), else NULL */
    uint32_t member_count;
    uint32_t count;      /* count_kind FIXED: the element count; FIELD: index of the sibling */
    uint32_t length;     /* length_kind FIXED: bytes; FIELD: index of the sibling (Binary only) */
    uint32_t line;       /* where the field is defined in the manifest (1-based) */
    uint32_t column;
    uint16_t slot;       /* index among the siblings that others take a count or length from,
                            or MANTRA_MANIFEST_NO_SLOT (used by the decoder) */
    uint16_t type;       /* enum mantra_type (one of the manifest types above) */
    uint8_t count_kind;  /* enum mantra_manifest_ref_kind */
    uint8_t length_kind; /* enum mantra_manifest_ref_kind */
    uint8_t size;        /* bytes of one element of a fixed-size type; 0 for Pointer (the trace
                            says), strings, Binary and struct */
    uint8_t layout;      /* a struct's enum mantra_manifest_layout (PACKED for other types) */
};
/* How a struct's elements are laid out (`layout:` of a struct field, docs/manifest.md). */
enum mantra_manifest_layout {
    MANTRA_MANIFEST_LAYOUT_PACKED = 0, /* members back to back (the default, as ETW manifests say) */
    MANTRA_MANIFEST_LAYOUT_C = 1       /* as a C compiler lays the struct out: each member at its
                                          natural alignment, each element padded to the largest */
};
#define MANTRA_MANIFEST_NO_SLOT 0xFFFFu
/* At most this many fields of one template (or of one struct) may be named by a count or length. */
#define MANTRA_MANIFEST_MAX_SLOTS 256u

typedef struct mantra_manifest_template {
    const char *name;          /* an inline template is named after its event's symbol */
    const mantra_manifest_field *fields;
    uint32_t field_count;
    uint32_t line;             /* where it is defined (an inline template: its event's `fields`) */
    uint32_t column;
    uint16_t slot_count;       /* fields of this template that others take a count or length from */
    uint16_t struct_slot_count; /* the largest slot count of its structs */
} mantra_manifest_template;

typedef struct mantra_manifest_keyword {
    const char *name;
    uint64_t mask;
} mantra_manifest_keyword;

typedef struct mantra_manifest_provider mantra_manifest_provider;

typedef struct mantra_manifest_event {
    const char *name;        /* base name, e.g. "MethodLoadVerbose" */
    const char *symbol;      /* e.g. "MethodLoadVerbose_V2" (given, or derived) */
    const mantra_manifest_provider *provider;
    const mantra_manifest_template *tpl; /* NULL: no template, an empty payload */
    const char *task_name;   /* or NULL */
    const char *opcode_name; /* as written (e.g. "win:Start"), or NULL */
    uint64_t keywords;       /* OR of the keyword masks */
    uint32_t id;
    uint32_t line;           /* where the event is defined (1-based) */
    uint32_t column;
    uint16_t task;           /* task value, 0 when none */
    uint8_t version;
    uint8_t level;           /* enum mantra_level, default Informational */
    uint8_t opcode;          /* opcode value, 0 when none */
    uint8_t stack;           /* 1: the runtime captures a stack (default) */
    /* Display names: the task's and the opcode's `message` (their short names, e.g. "GC" and
     * "Start": TraceEvent shows that event as GC/Start), else their names; a win: opcode shows as
     * winmeta.xml names it ("Start", "DCStop", ...). NULL when the event has no task / opcode. */
    const char *task_message;
    const char *opcode_message;
} mantra_manifest_event;

struct mantra_manifest_provider {
    const char *name;
    mantra_guid guid;                 /* given, or derived from the name (EventSource hash) */
    uint8_t guid_derived;             /* 1 when derived */
    const mantra_manifest_keyword *keywords;
    uint32_t keyword_count;
    const mantra_manifest_map *maps;
    uint32_t map_count;
    const mantra_manifest_template *templates; /* named templates, then inline ones */
    uint32_t template_count;
    const mantra_manifest_event *events;        /* in manifest order */
    uint32_t event_count;
    const mantra_manifest_event *const *events_by_key; /* the same, sorted by (id, version) */
};

typedef struct mantra_manifest_pgo_kind {
    const char *name;
    uint32_t value;
    int32_t size;    /* bytes per element; 0 none; -1 pointer size */
} mantra_manifest_pgo_kind;

/* ---- loading --------------------------------------------------------------------------------- */

/* 1 when libmantra was built with libyaml (the loaders work), else 0. */
int mantra_manifest_supported(void);

/* Loads the YAML manifest at `path`. Returns NULL on any problem, and then, when err is not NULL,
 * stores an error object in *err (free it with mantra_manifest_error_free()). */
mantra_manifest *mantra_manifest_load_file(const char *path, mantra_manifest_error **err);

/* The same from memory; `name` is what errors call the input (NULL: "<memory>"). */
mantra_manifest *mantra_manifest_load_memory(const void *data, size_t size, const char *name,
                                             mantra_manifest_error **err);

void mantra_manifest_free(mantra_manifest *m);

/* Bytes the loaded form holds (its arena). */
size_t mantra_manifest_memory_size(const mantra_manifest *m);

uint32_t mantra_manifest_provider_count(const mantra_manifest *m);
const mantra_manifest_provider *mantra_manifest_provider_at(const mantra_manifest *m, uint32_t index);
/* Lookups: O(log n). NULL when absent. */
const mantra_manifest_provider *mantra_manifest_find_provider(const mantra_manifest *m, const char *name);
const mantra_manifest_provider *mantra_manifest_find_provider_by_guid(const mantra_manifest *m,
                                                                      const mantra_guid *guid);
const mantra_manifest_event *mantra_manifest_find_event(const mantra_manifest_provider *p, uint32_t id,
                                                        uint32_t version);
/* A named map or template of a provider (linear; for tools), NULL when absent. */
const mantra_manifest_map *mantra_manifest_find_map(const mantra_manifest_provider *p, const char *name);
const mantra_manifest_template *mantra_manifest_find_template(const mantra_manifest_provider *p,
                                                              const char *name);
/* Total events over all providers. */
uint32_t mantra_manifest_event_count(const mantra_manifest *m);

uint32_t mantra_manifest_pgo_kind_count(const mantra_manifest *m);
const mantra_manifest_pgo_kind *mantra_manifest_pgo_kind_at(const mantra_manifest *m, uint32_t index);

/* ---- errors -------------------------------------------------------------------------------- */

const char *mantra_manifest_error_file(const mantra_manifest_error *e);
unsigned mantra_manifest_error_line(const mantra_manifest_error *e);   /* 1-based */
unsigned mantra_manifest_error_column(const mantra_manifest_error *e); /* 1-based, in characters */
const char *mantra_manifest_error_message(const mantra_manifest_error *e);
/* A hint (what `mantra-gen` prints as a `note:` line at the same place), or NULL. */
const char *mantra_manifest_error_note(const mantra_manifest_error *e);
/* Writes "FILE:LINE:COL: error: MESSAGE" (snprintf-like: NUL-terminated when size > 0, returns
 * the length the whole text needs). */
size_t mantra_manifest_error_format(const mantra_manifest_error *e, char *buf, size_t size);
void mantra_manifest_error_free(mantra_manifest_error *e);

/* ---- GUIDs and maps -------------------------------------------------------------------------- */

/* The EventSource GUID of a provider name (UTF-8): SHA-1 over a fixed namespace and the upper-cased
 * name in UTF-16BE, as .NET's EventSource.GetGuid (ASCII letters are upper-cased; other characters
 * are hashed as given). Returns 0, or -1 when name is not valid UTF-8. */
int mantra_manifest_eventsource_guid(const char *name, mantra_guid *out);
/* "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (optionally in braces, any case) -> 0, else -1. */
int mantra_manifest_guid_parse(const char *text, mantra_guid *out);
/* Lower-case text without braces into out[37]. */
void mantra_manifest_guid_format(const mantra_guid *g, char out[37]);

/* The entry of a value map for value, or NULL (binary search; for bitmaps, an exact entry). */
const char *mantra_manifest_map_lookup(const mantra_manifest_map *map, uint64_t value);
/* Names a value: a value map's entry; for a bitmap the entries of the set bits joined with "|"
 * (an entry for 0 names 0), with bits no entry covers appended as one hexadecimal number.
 * snprintf-like; returns 0 (and writes "") when nothing names the value. */
size_t mantra_manifest_map_format(const mantra_manifest_map *map, uint64_t value, char *buf, size_t size);

/* ---- payload decoding -------------------------------------------------------------------------- */

typedef struct mantra_manifest_decode_info {
    size_t consumed;                    /* payload bytes the template covered (up to the failure) */
    const mantra_manifest_field *field; /* SHORT / BAD_STRING: the field that did not fit; else NULL */
    int stopped;                        /* 1: a callback's negative result ended the walk */
} mantra_manifest_decode_info;

/* Shows the fields of `tpl` (NULL: an empty payload) in payload[0..size), read with the trace's
 * pointer_size (4 or 8), to the visitor (mantra/visit.h; values carry their manifest field in
 * `manifest_field`, and `field` is NULL). Returns MANTRA_DECODE_OK, MANTRA_DECODE_TRAILING (every
 * field decoded, bytes remain), MANTRA_DECODE_SHORT (the payload ends inside a field),
 * MANTRA_DECODE_BAD_STRING (a string has no terminator) or the negative value of a callback that
 * stopped the walk (pick one that is not a MANTRA_DECODE_* code); the values visited before a
 * failure are valid. visitor may be NULL (just check the payload). info may be NULL. A struct
 * array whose element takes no bytes is walked once (as the generated decoders do). */
int mantra_manifest_decode(const mantra_manifest_template *tpl, const uint8_t *payload, size_t size,
                           unsigned pointer_size, const mantra_field_visitor *visitor, void *ctx,
                           mantra_manifest_decode_info *info);

MANTRA_END_DECLS

#endif /* MANTRA_MANIFEST_H */
