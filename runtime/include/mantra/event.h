/* mantra/event.h - what generated writers and registration tables need from libmantra.
 *
 * Generated code (mantra-gen) describes every event with a constant mantra_event_desc and one
 * mutable mantra_event_state. The runtime keeps state->enabled up to date (non-zero while at
 * least one session wants the event); a generated `_enabled()` check is a single relaxed load of
 * that word and a branch. Writers hand the payload to mantra_event_write() as a list of data
 * descriptors, exactly in the order of the manifest's template, so that no allocation and no copy
 * happens before the runtime places the bytes in its buffer.
 */
#ifndef MANTRA_EVENT_H
#define MANTRA_EVENT_H

#include <stddef.h>
#include <stdint.h>

#include "mantra/status.h"

/* The per-event enabled word is a 64-bit atomic, read with one relaxed load. C++ sees the same
 * object as std::atomic<uint64_t> (same size and alignment on every supported compiler). */
#ifdef __cplusplus
#include <atomic>
typedef std::atomic<uint64_t> mantra_atomic_u64;
#define MANTRA_ATOMIC_LOAD_RELAXED(p) ((p)->load(std::memory_order_relaxed))
static_assert(sizeof(mantra_atomic_u64) == 8, "std::atomic<uint64_t> must be a plain 64-bit word");
#else
#include <stdatomic.h>
typedef _Atomic uint64_t mantra_atomic_u64;
#define MANTRA_ATOMIC_LOAD_RELAXED(p) atomic_load_explicit((p), memory_order_relaxed)
#endif

MANTRA_BEGIN_DECLS

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "mantra writes little-endian payloads and supports little-endian hosts only"
#endif

#if defined(__GNUC__) || defined(__clang__)
#define MANTRA_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define MANTRA_UNLIKELY(x) (x)
#endif

/* A GUID in the .NET layout (Data1..Data3 little-endian, Data4 as bytes): 16 bytes on the wire. */
typedef struct mantra_guid {
    uint32_t data1;
    uint16_t data2;
    uint16_t data3;
    uint8_t data4[8];
} mantra_guid;

/* Event levels (ETW numbering). */
enum mantra_level {
    MANTRA_LEVEL_LOG_ALWAYS = 0,
    MANTRA_LEVEL_CRITICAL = 1,
    MANTRA_LEVEL_ERROR = 2,
    MANTRA_LEVEL_WARNING = 3,
    MANTRA_LEVEL_INFORMATIONAL = 4,
    MANTRA_LEVEL_VERBOSE = 5
};

/* mantra_event_desc.flags */
#define MANTRA_EVENT_STACK 0x1u            /* the manifest's `stack: true`; recorded: libmantra walks no native
                                            * stack itself, a caller passes one to mantra_event_write_ex */
#define MANTRA_EVENT_PARTIAL_METADATA 0x2u /* metadata describes only the leading fields */

/* Constant description of one event version (generated). */
typedef struct mantra_event_desc {
    const char *name;         /* base name, e.g. "MethodLoadVerbose" */
    const char *symbol;       /* e.g. "MethodLoadVerbose_V2" */
    uint64_t keywords;        /* OR of the event's keyword masks */
    uint32_t id;              /* event id */
    uint8_t version;
    uint8_t level;            /* enum mantra_level */
    uint8_t opcode;
    uint8_t flags;            /* MANTRA_EVENT_* */
    uint16_t task;
    uint16_t field_count;     /* top-level fields of the template */
    const uint8_t *metadata;  /* nettrace V5 metadata blob from EventId on (see registry.c) */
    uint32_t metadata_size;
} mantra_event_desc;

/* Mutable per-event state (generated as zero, maintained by the runtime). */
typedef struct mantra_event_state {
    mantra_atomic_u64 enabled; /* bit n set: session n wants this event */
    void *runtime;            /* runtime-private */
} mantra_event_state;

/* A provider's constant description (generated). */
typedef struct mantra_provider_desc {
    const char *name;                 /* e.g. "Microsoft-Windows-DotNETRuntime" */
    const char *prefix;               /* C prefix, e.g. "DotNETRuntime" */
    mantra_guid guid;
    const mantra_event_desc *events;
    mantra_event_state *states;       /* parallel to events */
    uint32_t event_count;
} mantra_provider_desc;

/* Payload data descriptors: what a generated writer passes to mantra_event_write(). */
enum mantra_data_kind {
    MANTRA_DATA_BYTES = 0, /* size bytes at ptr, copied as they are */
    MANTRA_DATA_UTF8_AS_UTF16Z = 1, /* NUL-terminated UTF-8 at ptr (NULL = ""), written as UTF-16LE + NUL */
    MANTRA_DATA_UTF16Z = 2,         /* NUL-terminated UTF-16 at ptr (NULL = ""), written with its NUL */
    MANTRA_DATA_UTF8Z = 3           /* NUL-terminated UTF-8 at ptr (NULL = ""), written with its NUL */
};

typedef struct mantra_data {
    const void *ptr; /* MANTRA_DATA_BYTES with ptr NULL: size zero bytes */
    uint64_t size;   /* MANTRA_DATA_BYTES only */
    uint32_t kind;   /* enum mantra_data_kind */
} mantra_data;

/* n * elem, saturating at UINT64_MAX (which the runtime then refuses as too large). */
static inline uint64_t mantra_array_bytes(uint64_t n, uint64_t elem) {
    return (elem != 0 && n > UINT64_MAX / elem) ? UINT64_MAX : n * elem;
}

/* Largest payload an event may carry (as EventPipe: 64 KB); larger ones are refused and counted. */
#define MANTRA_MAX_PAYLOAD 65536u

/* Status codes of writers and of mantra_event_write(). */
enum mantra_write_status {
    MANTRA_WRITE_OK = 0,
    MANTRA_WRITE_DISABLED = 1,     /* no session wants the event: nothing done */
    MANTRA_WRITE_TOO_LARGE = -1,   /* payload over MANTRA_MAX_PAYLOAD: refused and counted */
    MANTRA_WRITE_BAD_STRING = -2,  /* a UTF-8 argument is not valid UTF-8: refused and counted */
    MANTRA_WRITE_DROPPED = -3      /* no buffer space: dropped and counted */
};

/* Serialises data[0..count) and hands the payload to every session that wants the event.
 * Called by generated writers after their _enabled() check. Never allocates. */
int mantra_event_write(const mantra_event_desc *desc, mantra_event_state *state, const mantra_data *data,
                       uint32_t count);

/* The same for a payload already laid out (generated writers of templates made only of fixed-size
 * scalars pack it themselves): no descriptor walk and no staging copy. */
int mantra_event_write_bytes(const mantra_event_desc *desc, mantra_event_state *state, const void *payload,
                             uint32_t size);

/* What an event may carry beyond its payload (mantra_event_write_ex; docs/sessions.md "Stacks,
 * threads and activity ids"). Zero-initialise, then set what applies. */
typedef struct mantra_event_options {
    const uint64_t *stack;  /* instruction pointers, leaf first; NULL or stack_depth 0: no stack */
    uint32_t stack_depth;   /* frames at stack; only the MANTRA_MAX_STACK_DEPTH leaf-most are kept */
    uint32_t flags;         /* MANTRA_EVENT_OPT_* */
    uint64_t thread_id;     /* with MANTRA_EVENT_OPT_THREAD_ID: the OS thread the event is about (a
                             * sample written on behalf of another thread); the writing thread stays
                             * the capture thread, whose sequence numbers the event takes */
    const mantra_guid *activity_id;         /* with MANTRA_EVENT_OPT_ACTIVITY: these two instead of */
    const mantra_guid *related_activity_id; /* the thread's (mantra/activity.h); NULL: all zero */
} mantra_event_options;

#define MANTRA_EVENT_OPT_THREAD_ID 0x1u
#define MANTRA_EVENT_OPT_ACTIVITY 0x2u

/* Deepest stack an event keeps, as EventPipe's EP_MAX_STACK_DEPTH (dotnet/runtime,
 * src/native/eventpipe/ep-types.h: 100 frames); deeper stacks keep their leaf-most frames. */
#define MANTRA_MAX_STACK_DEPTH 100u

/* mantra_event_write / mantra_event_write_bytes with a stack, a thread id and activity ids
 * (opts NULL: the same as those). Without opts an event still carries the writing thread's
 * activity ids when it has set any (mantra_activity_set). */
int mantra_event_write_ex(const mantra_event_desc *desc, mantra_event_state *state, const mantra_data *data,
                          uint32_t count, const mantra_event_options *opts);
int mantra_event_write_bytes_ex(const mantra_event_desc *desc, mantra_event_state *state, const void *payload,
                                uint32_t size, const mantra_event_options *opts);

/* The size mantra_event_write() would produce for these descriptors, or a negative
 * enum mantra_write_status when a string is invalid. */
int64_t mantra_payload_size(const mantra_data *data, uint32_t count);

/* Serialises the descriptors into out (out_size >= mantra_payload_size()). Returns bytes written
 * or a negative enum mantra_write_status. */
int64_t mantra_payload_serialize(const mantra_data *data, uint32_t count, uint8_t *out, size_t out_size);

/* A listener that receives every written payload (for in-process consumers and tests). Setting
 * one enables every registered event for the listener's session bit (bit 63). NULL removes it. */
typedef void (*mantra_listener_fn)(void *ctx, const mantra_event_desc *desc, const uint8_t *payload, size_t size);
void mantra_set_listener(mantra_listener_fn fn, void *ctx);

/* Registers a provider so that sessions can enable its events. Returns MANTRA_OK, or MANTRA_ENOSPC
 * (mantra/status.h) when the registry is full. Registering the same provider twice is harmless. */
int mantra_register_provider(const mantra_provider_desc *provider);

/* Events refused since start (too large, bad strings) and dropped. */
typedef struct mantra_write_counters {
    uint64_t written;
    uint64_t too_large;
    uint64_t bad_string;
    uint64_t dropped;
} mantra_write_counters;
void mantra_get_write_counters(mantra_write_counters *out);

MANTRA_END_DECLS

#endif /* MANTRA_EVENT_H */
