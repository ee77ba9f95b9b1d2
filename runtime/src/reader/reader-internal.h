/* Private parts of the nettrace reader (runtime/src/reader/). */
#ifndef MANTRA_READER_INTERNAL_H
#define MANTRA_READER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "common/arena-internal.h"
#include "common/hashmap-internal.h"
#include "mantra/reader.h"

/* ---- metadata parsing (metadata.c) ---- */

/* Parses a V4/V5 metadata payload (from MetadataId on) into a metadata record allocated in a.
 * Returns 0 or MANTRA_EFORMAT/MANTRA_ENOMEM; *what names the problem. */
int rd_parse_metadata_v5(cm_arena *a, const uint8_t *p, size_t n, mantra_trace_metadata **out, const char **what);
/* Parses the part of a V5 blob from EventId on (generated registry blobs) into fields. */
int rd_parse_metadata_v5_blob(cm_arena *a, const uint8_t *p, size_t n, mantra_trace_metadata *m, const char **what);
/* Parses one V6 metadata row (after its RowSize). */
int rd_parse_metadata_v6(cm_arena *a, const uint8_t *p, size_t n, mantra_trace_metadata **out, const char **what);
/* V6 strings: varuint32 length + UTF-8. Copies into the arena. Returns bytes used or 0. */
size_t rd_v6_string(cm_arena *a, const uint8_t *p, size_t n, const char **out);

/* ---- manifests loaded at run time (manifest_fields.c) ---- */
struct mantra_manifest_event;
/* The descriptions shown for a manifest event's template (allocated in a). 0 or MANTRA_ENOMEM. */
int rd_manifest_fields(cm_arena *a, const struct mantra_manifest_event *e, uint32_t pointer_size,
                       const mantra_field_desc **fields, uint32_t *count);
/* mantra_decode_event() for metadata with fields_from_manifest. */
int rd_manifest_decode(const mantra_trace_event *ev, const mantra_field_visitor *visitor, void *ctx);
/* How the payload matches the manifest template: a MANTRA_DECODE_* status (mantra/decode.h). */
int rd_manifest_check(const mantra_trace_event *ev);

/* ---- sorted delivery (order.c) ---- */
typedef struct rd_order rd_order;
rd_order *rd_order_new(void);
void rd_order_free(rd_order *o);
/* Offers one event of an EventBlock (copying it): `queue_key` is the current capture thread key. */
int rd_order_event(rd_order *o, const mantra_trace_event *ev, uint64_t queue_key);
/* Dispatches every queued event (sequence point, end of stream). */
int rd_order_flush(rd_order *o);
/* Pops the next ready event (valid until the next pop or free); NULL when none. */
const mantra_trace_event *rd_order_pop(rd_order *o);
/* Number of events waiting to be popped. */
size_t rd_order_ready(const rd_order *o);

#endif
