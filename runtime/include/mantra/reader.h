/* mantra/reader.h - streaming reader of EventPipe "nettrace" traces (formats V4/V5 and V6).
 *
 * A reader pulls one event at a time out of a file, a file descriptor or a memory buffer. Its
 * memory is bounded by the largest block of the trace (plus the metadata of the trace, the stacks
 * of the current sequence-point region and, in sorted mode, the events queued in that region); it
 * never holds the whole file. NetPerf (format V3) traces are recognised and refused.
 *
 *     mantra_reader *r = mantra_reader_new(NULL);
 *     if (mantra_reader_open_file(r, path) < 0) { puts(mantra_reader_last_error(r)); ... }
 *     const mantra_trace_event *ev;
 *     int rc;
 *     while ((rc = mantra_reader_next(r, &ev)) > 0) { ... ev->metadata->provider ... }
 *     rc == 0: end of stream seen; rc < 0: mantra_reader_last_error(r) says where and why
 *     mantra_reader_free(r);
 *
 * Damaged input: every complete block before the damage is delivered, then mantra_reader_next()
 * returns MANTRA_ETRUNCATED (input ends early) or MANTRA_EFORMAT (bytes that break the format),
 * and the error text starts with "offset N: " (N = byte offset of the problem in the stream).
 * All functions returning int give 0 (or a count) on success and a negative MANTRA_E* code on
 * failure; mantra_reader_last_error() then describes the failure.
 */
#ifndef MANTRA_READER_H
#define MANTRA_READER_H

#include <stddef.h>
#include <stdint.h>

#include "mantra/event.h"
#include "mantra/status.h"
#include "mantra/types.h"
#include "mantra/visit.h"

MANTRA_BEGIN_DECLS

struct mantra_manifest;       /* mantra/manifest.h */
struct mantra_manifest_event; /* mantra/manifest.h */

/* What the trace says about one event type (a metadata record). */
typedef struct mantra_trace_metadata {
    uint32_t id;             /* metadata id in the trace */
    const char *provider;    /* provider name, UTF-8 */
    uint32_t event_id;
    const char *name;        /* event name, UTF-8: the trace metadata's; when it has none, the name
                                of the manifest event that defines (provider, id, version), e.g.
                                "GCStart" (mantra_reader_add_manifest/_add_provider_manifest);
                                else "" */
    uint64_t keywords;
    uint32_t version;
    uint32_t level;
    uint32_t opcode;
    const mantra_field_desc *fields; /* top-level fields, in payload order */
    uint32_t field_count;
    int fields_from_registry; /* 1: the trace had no field list; fields come from a registered
                                 provider description (mantra_reader_add_provider) */
    int fields_invalid;       /* 1: the field list could not be parsed (fields left empty) */
    /* Fields from a loaded manifest (mantra_reader_add_manifest): the trace had no field list and
     * a manifest defines (provider, event id, version). `fields` then describes the template for
     * presentation (names and types; a count or length taken from another field shows as an Array,
     * Pointer as UInt32/UInt64 by the trace's pointer size, AnsiString as MANTRA_TYPE_STRING8);
     * decode such events with mantra_decode_event(), which uses the manifest's template, not with
     * mantra_decode_payload(). */
    const struct mantra_manifest_event *manifest_event; /* the event definition, or NULL */
    int fields_from_manifest;
    int has_provider_guid;    /* V6: the metadata carries the provider GUID */
    mantra_guid provider_guid;
    /* Display names of the event's task and opcode from the manifest that defines the event
     * (mantra_manifest_event task_message/opcode_message, e.g. "GC" and "Start": TraceEvent's
     * GC/Start), whether or not its fields come from there; NULL when unknown. */
    const char *task_name;
    const char *opcode_name;
    /* Payload bytes every event of this metadata has when each of its fields has a fixed size
     * (set when the metadata is read), else 0. */
    uint32_t fixed_payload_size;
    /* The reader's decoding plan for `fields` (private to the reader; NULL when none, e.g. in
     * metadata made by the caller): mantra_decode_event() decodes through it. */
    const struct mantra_field_plan *plan;
    /* With fields_from_manifest: the reader's length plan of the manifest template, which sets
     * decode_status without decoding (private to the reader; NULL in metadata made by the caller). */
    const struct mantra_manifest_plan *manifest_plan;
} mantra_trace_metadata;

/* Trace-wide facts (the Trace object / block). */
typedef struct mantra_trace_info {
    int format_version;        /* 4 for V4/V5 ("V5" is not visible in files), 6 for V6; 3 for a
                                  refused NetPerf file; 0 when not recognised */
    int16_t sync_time_utc[8];  /* SYSTEMTIME: year, month, day of week, day, hour, min, s, ms */
    int64_t sync_time_qpc;
    int64_t qpc_frequency;
    uint32_t pointer_size;
    uint32_t process_id;
    uint32_t processor_count;
    uint32_t expected_cpu_sampling_rate;
    size_t kv_count;           /* V6 key/value pairs of the Trace block */
    const char *const *keys;
    const char *const *values;
} mantra_trace_info;

/* One event. Everything it points to stays valid until the next mantra_reader_next() call. */
typedef struct mantra_trace_event {
    const mantra_trace_metadata *metadata;
    uint32_t metadata_id;
    uint32_t sequence;
    uint64_t thread_id;          /* OS thread id the event is about (V6: from its Thread block) */
    uint64_t capture_thread_id;  /* OS thread id of the recording thread */
    uint64_t thread_index;       /* V6: ThreadIndex / CaptureThreadIndex; V4/V5: the ids again */
    uint64_t capture_thread_index;
    uint32_t processor;          /* 0xFFFFFFFF: unknown */
    uint32_t stack_id;
    int64_t timestamp;           /* trace ticks (QPC units) */
    mantra_guid activity_id;
    mantra_guid related_activity_id;
    uint32_t label_list_id;      /* V6 */
    int is_sorted;               /* the row's IsSorted flag */
    /* Effective header values (V6 label lists may override the metadata's). */
    uint32_t version;
    uint32_t level;
    uint32_t opcode;
    uint64_t keywords;
    const uint8_t *payload;
    size_t payload_size;
    const uint8_t *stack;        /* stack_count little-endian addresses of pointer_size bytes */
    size_t stack_count;
    uint32_t pointer_size;
    uint64_t offset;             /* stream offset of the event's row */
    /* How the payload matches the fields that describe it (the trace's metadata, a manifest or a
     * registered provider), checked when the event is read — MANTRA_DECODE_OK (0),
     * MANTRA_DECODE_TRAILING (bytes after the last field), MANTRA_DECODE_SHORT (the payload ends
     * inside a field or holds a value its type does not allow), MANTRA_DECODE_BAD_STRING (a
     * manifest string without terminator); see mantra/decode.h. A payload longer or shorter than
     * its description is never decoded silently: the .NET runtime, for one, describes a
     * TraceLogging bool as 4 bytes and writes 1. Always 0 for events nothing describes (metadata
     * without fields and no manifest). Reading goes on either way;
     * mantra_reader_stats.decode_errors counts the events delivered with a non-zero status. */
    int decode_status;
} mantra_trace_event;

/* Address i of an event's stack (leaf first). */
uint64_t mantra_trace_event_ip(const mantra_trace_event *ev, size_t i);

/* Counters. */
typedef struct mantra_reader_stats {
    uint64_t events;          /* events delivered so far */
    uint64_t metadata;        /* metadata records read */
    uint64_t stacks;          /* stacks read */
    uint64_t sequence_points; /* sequence-point blocks read */
    uint64_t dropped;         /* events lost, from per-capture-thread sequence gaps, counted as TraceEvent's
                               * EventCache.cs does (microsoft/perfview) */
    uint64_t blocks;          /* blocks read completely */
    uint64_t bytes_read;      /* stream bytes consumed */
    uint64_t total_bytes;     /* size of the input when known (files, memory), else 0 */
    uint64_t decode_errors;   /* events delivered with a non-zero decode_status */
    uint64_t manifest_events; /* events delivered whose fields come from a loaded manifest */
} mantra_reader_stats;

/* Reader options. */
/* Deliver events in time order as TraceEvent does (microsoft/perfview, src/TraceEvent/EventPipe/EventCache.cs:
 * per-capture-thread queues, merged on IsSorted rows, sequence points and the end of the stream). */
#define MANTRA_READER_SORTED 0x1u
/* Read a regular file (mantra_reader_open_file, or a descriptor of one at offset 0) through a
 * read-only memory mapping instead of read() calls (not under WASI, where read() is used). The
 * events are the same. Off by default: on the virtual machines measured (bench/README.md, "The
 * reader"), touching mapped pages cost more CPU time than copying them with read(). */
#define MANTRA_READER_MAP 0x2u

typedef struct mantra_reader_options {
    unsigned flags;          /* MANTRA_READER_* */
    size_t max_block_size;   /* refuse blocks larger than this (0: 64 MiB) */
} mantra_reader_options;

typedef struct mantra_reader mantra_reader;

/* A new reader (NULL options: defaults). NULL when out of memory. */
mantra_reader *mantra_reader_new(const mantra_reader_options *options);
void mantra_reader_free(mantra_reader *r);

/* Registers a provider description (for instance a generated one, mantra_dotnet_providers[i]):
 * events of that provider whose trace metadata has no field list (the .NET runtime writes such
 * "minimal" metadata for its native providers) are decoded with the description's fields when
 * the event id and version match. Call before opening; the description must outlive the reader. */
int mantra_reader_add_provider(mantra_reader *r, const mantra_provider_desc *provider);

/* Attaches a manifest loaded at run time (mantra/manifest.h): events whose trace metadata has no
 * field list are decoded with the manifest's template for (provider, event id, version). The
 * provider is found by the GUID where the trace gives one (V6 metadata), else by name. When the
 * trace's metadata has fields, those win. Manifests are searched in the order they were added,
 * before the providers of mantra_reader_add_provider(). Call before opening; the manifest must
 * outlive the reader (it is not copied, and may be shared by several readers). */
int mantra_reader_add_manifest(mantra_reader *r, const struct mantra_manifest *manifest);

/* Attaches the manifest that the providers of mantra_reader_add_provider() were generated from.
 * A provider description holds each event's nettrace metadata, which cannot express a counted
 * array, a length-field binary, a struct or an AnsiString: for those events
 * (MANTRA_EVENT_PARTIAL_METADATA) it describes only the leading fields, e.g. not the Data of
 * JitInstrumentationDataVerbose (298). An event of a registered provider whose description is partial
 * and whose trace metadata has no field list is decoded with this manifest's template instead, as
 * with mantra_reader_add_manifest() (fields_from_manifest). Call before opening; the manifest must
 * outlive the reader. */
int mantra_reader_add_provider_manifest(mantra_reader *r, const struct mantra_manifest *manifest);

/* Opens the input and reads the stream header and the Trace object/block. One open per reader.
 * The fd is not closed by the reader; the memory must stay valid while the reader is used. */
int mantra_reader_open_file(mantra_reader *r, const char *path);
int mantra_reader_open_fd(mantra_reader *r, int fd);
int mantra_reader_open_memory(mantra_reader *r, const void *data, size_t size);

/* Next event: 1 and *ev set; 0 at the end-of-stream marker; a negative MANTRA_E* code on error
 * (after which it keeps returning that code). */
int mantra_reader_next(mantra_reader *r, const mantra_trace_event **ev);

const mantra_trace_info *mantra_reader_info(const mantra_reader *r);
const mantra_reader_stats *mantra_reader_get_stats(const mantra_reader *r);
/* 1 once the end-of-stream marker has been read. */
int mantra_reader_complete(const mantra_reader *r);
/* Text of the last error ("offset N: what"), "" when none. */
const char *mantra_reader_last_error(const mantra_reader *r);
/* Stream offset of the last error (0 when none). */
uint64_t mantra_reader_error_offset(const mantra_reader *r);
/* Metadata by id (NULL when unknown). */
const mantra_trace_metadata *mantra_reader_metadata(const mantra_reader *r, uint32_t id);

/* ---- metadata-driven payload decoding ---------------------------------------------------- */

/* Decodes payload[0..size) with fields[0..count) and calls the visitor (mantra/visit.h) for every
 * value, in order.
 * Returns 0 when every field was decoded and the payload used up, 1 when bytes remain after the
 * last field, MANTRA_EFORMAT when the payload ends inside a field or holds a bad value (the
 * values before it have been visited). */
int mantra_decode_payload(const mantra_field_desc *fields, uint32_t count, const uint8_t *payload, size_t size,
                          uint32_t pointer_size, const mantra_field_visitor *visitor, void *ctx);

/* The same for an event, with its metadata's fields; for metadata whose fields come from a manifest
 * (fields_from_manifest), with the manifest's template and the event's pointer size, values shown
 * through the descriptions in metadata->fields (and map names in mantra_value.map_text). */
int mantra_decode_event(const mantra_trace_event *ev, const mantra_field_visitor *visitor, void *ctx);

MANTRA_END_DECLS

#endif /* MANTRA_READER_H */
