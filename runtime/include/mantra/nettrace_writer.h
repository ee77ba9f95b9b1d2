/* mantra/nettrace_writer.h - writes nettrace V5 (EventPipe) traces that TraceEvent, PerfView and
 * dotnet-trace open.
 *
 * Output: stream header, Trace object (version 4, min reader 4), then MetadataBlocks, StackBlocks,
 * EventBlocks and SPBlocks, and the end-of-stream tag, as the runtime writes them (dotnet/runtime,
 * src/native/eventpipe/ep-file.c, ep-block.c; format described in microsoft/perfview,
 * src/TraceEvent/EventPipe/NetTraceFormat_v5.md). Rows use compressed headers; every event
 * references a stack id, an explicit size-0 stack when it has none, as the runtime does (TraceEvent
 * before 3.1.19 kept the previous event's stack for an unknown id: microsoft/perfview PR #2172).
 *
 * Usage:
 *   mantra_nettrace_options o; mantra_nettrace_options_init(&o); ... adjust o ...
 *   mantra_nettrace_writer *w; mantra_nettrace_writer_new(&w, sink, &o);   writes header + Trace
 *   mantra_nettrace_event_key k; mantra_nettrace_add_event(w, provider, desc, &k);   (or _raw)
 *   mantra_nettrace_event ev = {.key = k, .timestamp = t, .thread_id = tid, ...};
 *   mantra_nettrace_write(w, &ev, payload, size);       (or _write_data with mantra_data[])
 *   mantra_nettrace_finish(w);     flushes, final sequence point, end tag (the sink stays open)
 *   mantra_nettrace_writer_free(w);
 *
 * Ordering (TraceEvent's merge: microsoft/perfview, src/TraceEvent/EventPipe/EventCache.cs). Two
 * modes:
 *  - MANTRA_NETTRACE_GLOBAL_ORDER (default): events arrive in non-decreasing timestamp order across
 *    all threads; every row is marked IsSorted. An older event is refused with MANTRA_EORDER.
 *  - MANTRA_NETTRACE_CALLER_RUNS: the caller merges per-thread buffers the way the runtime does and
 *    sets MANTRA_NETTRACE_EVENT_SORTED on the first event of each run (an event no later event is
 *    older than). Events of one capture thread must still be in timestamp order, and the capture
 *    thread may change only on a sorted event; violations are refused with MANTRA_EORDER.
 *
 * Metadata ids are assigned in order of first use, starting at 1; an event key only names a
 * definition. The metadata row is placed in the MetadataBlock flushed before the EventBlock that
 * first uses it.
 *
 * Sequence numbers: per capture thread; pass 0 to let the writer use last + 1 (first: 1), or pass
 * your own (gaps mean dropped events to readers). mantra_nettrace_thread_dropped() accounts
 * for events dropped after the last written one. SPBlocks list every capture thread seen.
 *
 * Memory: block buffers and tables are allocated at creation; they grow only when a new capture
 * thread, event definition or distinct stack appears. Writing an event allocates nothing.
 *
 * Errors: 0 or a negative MANTRA_E* code (mantra/status.h), text in mantra_nettrace_last_error().
 * Refusing an event (bad argument, too large, out of order) leaves the writer usable. An output
 * error is sticky: the writer writes nothing more (what is written stays a valid prefix up to the
 * failed block) and every later call returns MANTRA_EIO/the sink's code.
 */
#ifndef MANTRA_NETTRACE_WRITER_H
#define MANTRA_NETTRACE_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "mantra/event.h"
#include "mantra/status.h"
#include "mantra/sink.h"

MANTRA_BEGIN_DECLS

/* options.sync_time_unix_ms value meaning "the current time" (CLOCK_REALTIME at creation). */
#define MANTRA_NETTRACE_TIME_NOW INT64_MIN

enum mantra_nettrace_order {
    MANTRA_NETTRACE_GLOBAL_ORDER = 0,
    MANTRA_NETTRACE_CALLER_RUNS = 1
};

typedef struct mantra_nettrace_options {
    int64_t sync_time_unix_ms;  /* UTC wall clock (ms since 1970) at sync_time_ticks; default NOW */
    uint64_t sync_time_ticks;   /* SyncTimeQPC: the clock value at that moment; default 0 */
    uint64_t ticks_per_second;  /* QPCFrequency, > 0; default 1,000,000,000 */
    uint32_t pointer_size;      /* 4 or 8 (stack IP size); default sizeof(void *) */
    uint32_t process_id;        /* default getpid() */
    uint32_t processor_count;   /* default the online CPU count */
    uint32_t sampling_rate_ns;  /* ExpectedCPUSamplingRate; default 1,000,000 (1 ms) */
    uint32_t block_bytes;       /* EventBlock content flush threshold; default 100 KB (min 1024) */
    uint64_t sequence_point_bytes; /* also write an SPBlock every N bytes of output; 0: never */
    uint32_t order;             /* enum mantra_nettrace_order; default GLOBAL_ORDER */
} mantra_nettrace_options;

void mantra_nettrace_options_init(mantra_nettrace_options *opts);

typedef struct mantra_nettrace_writer mantra_nettrace_writer;

/* Handle of an event definition (not its metadata id). */
typedef uint32_t mantra_nettrace_event_key;

/* mantra_nettrace_event.flags */
#define MANTRA_NETTRACE_EVENT_SORTED 0x1u /* CALLER_RUNS mode: first event of a run */

typedef struct mantra_nettrace_event {
    mantra_nettrace_event_key key;
    uint32_t flags;                /* MANTRA_NETTRACE_EVENT_* */
    uint64_t timestamp;            /* in ticks of options.ticks_per_second */
    uint64_t thread_id;            /* OS thread the event is about */
    uint64_t capture_thread_id;    /* thread whose buffer recorded it; 0: same as thread_id */
    uint32_t processor_number;     /* 0xFFFFFFFF = unknown */
    uint32_t sequence;             /* 0: writer assigns last + 1 for the capture thread */
    const uint64_t *stack;         /* IPs, leaf first; NULL or 0 frames: no stack */
    uint32_t stack_frames;
    const mantra_guid *activity_id;         /* NULL: all zero */
    const mantra_guid *related_activity_id; /* NULL: all zero */
} mantra_nettrace_event;

/* Writes the stream header and the Trace object to sink, which must not have been written to yet
 * (block padding depends on the absolute offset). The sink stays owned by the caller and must
 * outlive the writer. opts NULL: defaults. On failure *out may hold a writer in the
 * failed state (read its error, then free it), or NULL. */
int mantra_nettrace_writer_new(mantra_nettrace_writer **out, mantra_sink *sink, const mantra_nettrace_options *opts);
/* Frees without finishing (a trace not finished has no end tag). NULL accepted. */
void mantra_nettrace_writer_free(mantra_nettrace_writer *w);

/* A generated event: the metadata record is int32 id + UTF-16 provider name + desc->metadata
 * (dotnet/runtime, src/native/eventpipe/ep-config.c). The same desc always gives the same key. */
int mantra_nettrace_add_event(mantra_nettrace_writer *w, const mantra_provider_desc *provider,
                              const mantra_event_desc *desc, mantra_nettrace_event_key *key);
/* Any event: provider name (UTF-8) and a V5 metadata blob from EventId on (e.g. built with
 * mantra/metadata.h). The blob is copied. Each call makes a new definition. */
int mantra_nettrace_add_event_raw(mantra_nettrace_writer *w, const char *provider_name, const void *metadata,
                                  size_t metadata_size, mantra_nettrace_event_key *key);
/* The metadata id a key got on first use (0 while unused). */
uint32_t mantra_nettrace_metadata_id(const mantra_nettrace_writer *w, mantra_nettrace_event_key key);

/* Writes one event with payload[0..size) (size <= MANTRA_MAX_PAYLOAD). */
int mantra_nettrace_write(mantra_nettrace_writer *w, const mantra_nettrace_event *ev, const void *payload,
                          size_t size);
/* The same with the payload given as data descriptors (mantra/event.h), serialised in place. */
int mantra_nettrace_write_data(mantra_nettrace_writer *w, const mantra_nettrace_event *ev, const mantra_data *data,
                               uint32_t count);

/* Counts n events of a capture thread as dropped: its sequence number advances by n (readers see
 * the gap at the next event or sequence point). */
int mantra_nettrace_thread_dropped(mantra_nettrace_writer *w, uint64_t capture_thread_id, uint32_t n);

/* Writes pending blocks (Metadata, Stack, Event, in that order) to the sink, then flushes it. */
int mantra_nettrace_flush(mantra_nettrace_writer *w);
/* Flushes, then writes an SPBlock (timestamp = the largest timestamp written so far) listing every
 * capture thread's last sequence number; stack ids restart after it. */
int mantra_nettrace_sequence_point(mantra_nettrace_writer *w);
/* Flush, final sequence point, end-of-stream tag 0x01, sink flush. Later writes fail with
 * MANTRA_ESTATE. */
int mantra_nettrace_finish(mantra_nettrace_writer *w);

typedef struct mantra_nettrace_stats {
    uint64_t events;            /* events written */
    uint64_t metadata;          /* metadata rows */
    uint64_t stacks;            /* stack entries (incl. empty ones), summed over regions */
    uint64_t event_blocks, metadata_blocks, stack_blocks, sequence_points;
    uint64_t bytes;             /* bytes handed to the sink */
    uint64_t refused;           /* events refused (argument, size, order) */
    uint64_t io_errors;         /* output errors (0 or 1: they are sticky) */
    uint32_t threads;           /* capture threads seen */
} mantra_nettrace_stats;
void mantra_nettrace_get_stats(const mantra_nettrace_writer *w, mantra_nettrace_stats *out);

/* Text of the last error ("" when none). */
const char *mantra_nettrace_last_error(const mantra_nettrace_writer *w);

/* Converts a UTC time (ms since 1970) to the 8 SYSTEMTIME fields of the Trace object (Year, Month, DayOfWeek,
 * Day, Hour, Minute, Second, Milliseconds). Returns MANTRA_EINVAL outside years 1601..30827. */
int mantra_nettrace_systemtime(int64_t unix_ms, uint16_t out[8]);

MANTRA_END_DECLS

#endif /* MANTRA_NETTRACE_WRITER_H */
