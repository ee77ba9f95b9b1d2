/* mantra/visit.h - one visitor for decoded payloads, whichever description drives the decoding.
 *
 * Two decoders walk a payload and show every value to the same callbacks: mantra_decode_payload()
 * and mantra_decode_event() (mantra/reader.h), driven by a trace's field descriptions, and
 * mantra_manifest_decode() (mantra/manifest.h), driven by a loaded manifest's template. Both show
 * the same shapes:
 *
 *   scalars and strings     one scalar() call (strings: `data`/`size` hold the raw bytes, UTF-16LE
 *                           without the terminator for MANTRA_TYPE_STRING, see mantra_str16_to_utf8;
 *                           MANTRA_TYPE_STRING8 for a manifest's AnsiString);
 *   arrays                  begin_array() with the element count in `count` and (for fixed-size
 *                           elements) the raw element bytes in `data`/`size`, one call per element
 *                           (name "", `index` set), end_array(). A manifest's Binary is an array of
 *                           Byte, a manifest struct an array of objects;
 *   objects (struct elements) begin_object() with the member count in `count`, the members,
 *                           end_object().
 *
 * `depth` is 0 for the fields of the event, one more for the elements of an array and for the
 * members of an object's element: a struct element is at depth 1, its members at depth 2.
 */
#ifndef MANTRA_VISIT_H
#define MANTRA_VISIT_H

#include <stddef.h>
#include <stdint.h>

#include "mantra/event.h"
#include "mantra/status.h"
#include "mantra/types.h"

MANTRA_BEGIN_DECLS

struct mantra_manifest_field; /* mantra/manifest.h */

/* One field of an event's metadata (a tree: objects have fields, arrays an element type). */
typedef struct mantra_field_desc {
    const char *name;                         /* UTF-8; "" for unnamed fields and element types */
    uint32_t type;                            /* enum mantra_type */
    uint32_t fixed_count;                     /* MANTRA_TYPE_FIXED_ARRAY: element count */
    const struct mantra_field_desc *element;  /* arrays, RelLoc, DataLoc: element type */
    const struct mantra_field_desc *fields;   /* MANTRA_TYPE_OBJECT: its fields */
    uint32_t field_count;
} mantra_field_desc;

/* One decoded value. */
typedef struct mantra_value {
    /* Its description in trace terms (the element type inside arrays). Set by the reader's
     * decoders (for events decoded with a manifest too); NULL from mantra_manifest_decode(). */
    const mantra_field_desc *field;
    /* Decoding with a manifest: the manifest field the value belongs to (for array elements and
     * struct elements, the array's or struct's field); else NULL. */
    const struct mantra_manifest_field *manifest_field;
    const char *name;   /* field name ("" for array elements) */
    uint32_t type;      /* enum mantra_type as a trace shows it (a manifest's Pointer: UInt32 or
                           UInt64 by the pointer size; Binary and counted fields: ARRAY or
                           FIXED_ARRAY; RelLoc/DataLoc: that code) */
    unsigned depth;     /* see above */
    uint64_t index;     /* array elements: the element's index; else 0 */
    size_t offset;      /* where the value starts in the payload */
    uint64_t u;         /* integers (Boolean, Char, DateTime, Pointer too): their bits, zero-extended */
    int64_t i;          /* integers: sign-extended for signed types (and VarInt), else as u */
    double d;           /* Single, Double */
    mantra_guid guid;
    const uint8_t *data; /* data[0..size): the value's bytes in the payload (strings: without the */
    size_t size;         /* terminator; arrays of variable-size elements: size 0 until end_array) */
    size_t count;       /* strings: code units; arrays: elements; objects: members */
    /* Integer fields with a value map or bitmap in the manifest the fields come from: the map's
     * name for the value (mantra_manifest_map_format), or NULL (also for every other field).
     * Valid during the callback. */
    const char *map_text;
} mantra_value;

/* Callbacks of a decoding walk; any may be NULL. A callback returning a negative value stops the
 * walk, and the decoder returns that value. begin_array returning 1 skips the elements (no calls
 * for them; end_array is still called). Other positive results are ignored. */
typedef struct mantra_field_visitor {
    int (*scalar)(void *ctx, const mantra_value *v);
    int (*begin_object)(void *ctx, const mantra_value *v);
    int (*end_object)(void *ctx, const mantra_value *v);
    int (*begin_array)(void *ctx, const mantra_value *v);
    int (*end_array)(void *ctx, const mantra_value *v);
} mantra_field_visitor;

MANTRA_END_DECLS

#endif /* MANTRA_VISIT_H */
