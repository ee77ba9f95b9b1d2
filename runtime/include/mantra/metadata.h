/* mantra/metadata.h - builds nettrace V5 metadata blobs for events that have no generated
 * description (EventSource-style events, tests), for mantra_nettrace_add_event_raw().
 *
 * The blob starts at EventId: EventId, EventName, Keywords, Version, Level, the V1 field list, then
 * tags: Opcode when it is not 0, and V2Params when a field anywhere is an array, in which case the
 * V1 list is written empty, as the runtime does (dotnet/runtime, src/native/eventpipe/
 * ep-metadata-generator.c; read by microsoft/perfview, src/TraceEvent/EventPipe/
 * EventPipeMetadata.cs). Structs (TypeCode 1, Object) nest to any depth up to
 * MANTRA_METADATA_MAX_DEPTH; an array's element is a scalar type or a struct.
 *
 *   mantra_metadata_builder *b; mantra_metadata_builder_new(&b);
 *   mantra_metadata_begin(b, 7, "Request", 0x1, 0, MANTRA_LEVEL_INFORMATIONAL, 0);
 *   mantra_metadata_field(b, "Id", MANTRA_TYPE_UINT64);
 *   mantra_metadata_array(b, "Codes", MANTRA_TYPE_UINT16);
 *   mantra_metadata_begin_struct(b, "Peer"); ...fields...; mantra_metadata_end_struct(b);
 *   mantra_metadata_finish(b, &blob, &size);    blob valid until the next begin or free
 *
 * Errors: 0 or a negative MANTRA_E* code (mantra/status.h), text in mantra_metadata_last_error().
 */
#ifndef MANTRA_METADATA_H
#define MANTRA_METADATA_H

#include <stddef.h>
#include <stdint.h>

#include "mantra/sink.h"
#include "mantra/status.h"
#include "mantra/types.h"

MANTRA_BEGIN_DECLS

#define MANTRA_METADATA_MAX_DEPTH 16

typedef struct mantra_metadata_builder mantra_metadata_builder;

int mantra_metadata_builder_new(mantra_metadata_builder **out);
void mantra_metadata_builder_free(mantra_metadata_builder *b);

/* Starts a new event description (forgets the previous one). name may be "" (no name, like the
 * runtime's minimal metadata in dotnet/runtime, src/native/eventpipe/ep-event.c). */
int mantra_metadata_begin(mantra_metadata_builder *b, uint32_t event_id, const char *name, uint64_t keywords,
                          uint32_t version, uint32_t level, uint8_t opcode);
/* Writes V2Params even when no field is an array (default: only when needed). */
int mantra_metadata_force_v2(mantra_metadata_builder *b, int on);
/* A scalar field (any type code except OBJECT and ARRAY) of the innermost open struct. */
int mantra_metadata_field(mantra_metadata_builder *b, const char *name, uint32_t typecode);
/* An array of a scalar type. */
int mantra_metadata_array(mantra_metadata_builder *b, const char *name, uint32_t element_typecode);
/* A struct field; the fields that follow belong to it until mantra_metadata_end_struct(). */
int mantra_metadata_begin_struct(mantra_metadata_builder *b, const char *name);
/* An array of structs; the following fields describe the element until mantra_metadata_end_struct(). */
int mantra_metadata_begin_struct_array(mantra_metadata_builder *b, const char *name);
int mantra_metadata_end_struct(mantra_metadata_builder *b);
/* Serialises; every struct must be closed. The blob stays valid until the next begin or free. */
int mantra_metadata_finish(mantra_metadata_builder *b, const uint8_t **blob, size_t *size);

const char *mantra_metadata_last_error(const mantra_metadata_builder *b);

MANTRA_END_DECLS

#endif /* MANTRA_METADATA_H */
