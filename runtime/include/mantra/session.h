/* mantra/session.h - EventPipe-style tracing sessions.
 *
 * A session enables events of the registered providers (mantra_register_provider) by a provider
 * configuration in dotnet-trace's syntax and writes the events that generated writers emit into
 * a nettrace V5 file, a file descriptor, or a listener callback.
 *
 *   mantra_session_config c; mantra_session_config_init(&c);
 *   c.providers = "Microsoft-Windows-DotNETRuntime:0x18:5";
 *   c.output = MANTRA_SESSION_OUTPUT_FILE; c.path = "trace.nettrace";
 *   mantra_session_id id; mantra_session_start(&id, &c);  ...  mantra_session_stop(id);
 *
 * Enable rule (the newest EventPipe rule: dotnet/runtime, src/native/eventpipe/ep-session-provider.c,
 * ep_session_provider_allows_event): an event is enabled for a
 * session when the session has an entry for its provider (exact, case-sensitive name; `*` is a
 * catch-all that shadows named entries) and
 *   (event keywords == 0 || (event keywords & entry keywords) != 0) and
 *   (event level == 0 || entry level == 0 || entry level >= event level).
 * Keywords 0 in an entry do NOT mean "all". Event keyword bits 44..47 (EventSource session bits)
 * are ignored unless the event's keywords are all ones (dotnet/runtime PR #75248).
 *
 * Session bits. Each running session owns one bit of every event's mantra_event_state.enabled:
 * bits 0..62 for sessions, bit 63 stays the process-wide listener of mantra_set_listener()
 * (mantra/event.h), which counts as the 64th session. So at most MANTRA_MAX_SESSIONS (63)
 * sessions run at once beside the listener. Masks are recomputed under the session lock whenever
 * a session starts or stops or a provider registers, and published with release stores.
 *
 * Buffers (as dotnet/runtime, src/native/eventpipe/ep-buffer-manager.c): each writing thread has its own buffers per session, taken
 * from the session's budget (buffer_mb); the write path takes no lock while the thread's current
 * buffer has room. Drop mode: when no buffer can be had within the budget the event is dropped and
 * counted, and its per-thread sequence number is still consumed, so readers see the gap. A session
 * starts with a pool of mapped buffers (MANTRA_SESSION_POOL_MB, default 16, at most a quarter of the
 * cap) that the drain refills as it writes buffers out; a writer that finds the pool used up while
 * the drain holds buffers waits at most 2 ms for one to come back before it maps fresh memory (and
 * waits no more until the drain has given one back); only with 1 MB or more of room under the cap,
 * so Drop mode still drops at once near the cap (docs/sessions.md, "When the pool is used up").
 *
 * Drain: a thread per session moves buffers to the output every flush_interval_ms in per-thread
 * runs as EventPipe writes them (the nettrace writer in CALLER_RUNS mode; a row is IsSorted exactly
 * when no later row is older, so TraceEvent merges them in time order), with sequence points
 * every sequence_point_mb MB of output. Stop: ProcessInfo event (into the stopping session),
 * disable, flush, final sequence point, end-of-stream tag, close.
 *
 * Errors: 0 or a negative MANTRA_E* code (mantra/status.h); the text of the calling thread's last
 * session error is mantra_session_last_error(), for provider specs "providers:COLUMN: message".
 */
#ifndef MANTRA_SESSION_H
#define MANTRA_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "mantra/event.h"
#include "mantra/status.h"
#include "mantra/sink.h"

MANTRA_BEGIN_DECLS

#define MANTRA_MAX_SESSIONS 63u /* + the listener of mantra_set_listener() = 64 */

/* ---- provider configuration ------------------------------------------------------------ */

/* Longest ARGS field of a provider entry, with its NUL. */
#define MANTRA_PROVIDER_ARGS_MAX 1024u

typedef struct mantra_provider_spec {
    char name[128];    /* provider name, or "*" */
    uint64_t keywords;
    uint32_t level;    /* 0..255, enum mantra_level */
    char args[MANTRA_PROVIDER_ARGS_MAX]; /* ARGS (EventPipe filter data) as written; "" when none */
} mantra_provider_spec;

/* Parses `Name[:0xKEYWORDS[:LEVEL[:ARGS]]]` entries separated by commas (dotnet-trace syntax).
 * KEYWORDS: hexadecimal (0x prefix optional); LEVEL: 0..255 or a level name (LogAlways,
 * Critical, Error, Warning, Informational, Verbose; any case). Missing fields take dotnet-trace's
 * defaults: keywords 0, level 4 (Informational) - except `*` alone, which means all keywords at
 * Verbose. ARGS is the provider's filter data, `key=value` pairs separated by `;`
 * (`EventCounterIntervalSec=1`), kept byte for byte in args (read it with
 * mantra_provider_spec_arg); it runs to the next comma outside double quotes, so a quoted value may
 * hold `,` `;` `:` and `=`. Returns 0 and the entry count in *count; MANTRA_EINVAL for bad syntax
 * (also an unterminated quote, or ARGS of MANTRA_PROVIDER_ARGS_MAX bytes or more), with the
 * 1-based column in *err_col and a message in mantra_session_last_error(); MANTRA_ERANGE when more
 * than cap entries. */
int mantra_provider_spec_parse(const char *spec, mantra_provider_spec *out, size_t cap, size_t *count,
                               size_t *err_col);

/* The value of `key` in the entry's ARGS, as the .NET runtime reads filter data: pairs split at `;`
 * and each pair at its first `=`, outside double quotes (dotnet/diagnostics,
 * src/Tools/dotnet-trace/Extensions.cs, ParseArgumentString); keys match exactly (case-sensitive);
 * a value wholly inside double quotes is returned without them. Copies the value with its NUL into
 * out (size bytes) and returns 1; 0 when the key is absent (out ""); MANTRA_ERANGE when the value
 * does not fit (out ""); MANTRA_EINVAL for a NULL argument. A key given twice: the first wins. */
int mantra_provider_spec_arg(const mantra_provider_spec *spec, const char *key, char *out, size_t size);

/* Writes one entry `Name:0xKEYWORDS:LEVEL[:ARGS]` into out (size bytes, NUL-terminated) that
 * mantra_provider_spec_parse reads back as these values: for a caller that has the fields apart,
 * such as a diagnostics server with an IPC CollectTracing provider (name, keywords, level, filter
 * data). Each `key=value` pair of args whose value holds a ',' gets the value quoted, so that the
 * comma does not end the entry; args NULL or "" writes no ARGS field. Returns the length written;
 * MANTRA_EINVAL when the name is empty or holds ':' or ',', or args has an unbalanced quote, a key
 * with a comma or a quote, or a value with both a comma and a quote (text in mantra_session_last_error()); MANTRA_ERANGE when out
 * is too small or args would exceed MANTRA_PROVIDER_ARGS_MAX - 1 bytes. */
int mantra_provider_spec_format(const char *name, uint64_t keywords, uint32_t level, const char *args, char *out,
                                size_t size);

/* 1 when these specs enable the event of the named provider, else 0 (the rule above). */
int mantra_provider_spec_enables(const mantra_provider_spec *specs, size_t count, const char *provider,
                                 const mantra_event_desc *desc);

/* ---- sessions -------------------------------------------------------------------------- */

typedef uint64_t mantra_session_id;

enum mantra_session_output {
    MANTRA_SESSION_OUTPUT_FILE = 0,     /* path: created or truncated */
    MANTRA_SESSION_OUTPUT_FD = 1,       /* fd: not closed by the session */
    MANTRA_SESSION_OUTPUT_LISTENER = 2, /* listener callback on the drain thread, in time order */
    MANTRA_SESSION_OUTPUT_CALLBACKS = 3 /* the trace bytes through sink_callbacks (mantra/sink.h):
                                         * the session makes a callbacks sink over them, calls close
                                         * at most once (at stop, or when the start fails after the
                                         * sink was made) and never calls them afterwards */
};

/* What a session listener receives for each event. */
typedef struct mantra_session_record {
    const mantra_provider_desc *provider; /* never NULL (ProcessInfo goes to file/fd outputs only) */
    const char *provider_name;
    const mantra_event_desc *desc;
    uint64_t timestamp;  /* mantra clock: monotonic ns */
    uint64_t thread_id;  /* OS thread id */
    uint32_t sequence;   /* per thread and session, counting every attempt */
    const uint8_t *payload;
    size_t size;
} mantra_session_record;
typedef void (*mantra_session_listener_fn)(void *ctx, const mantra_session_record *rec);

typedef struct mantra_session_config {
    const char *providers;          /* dotnet-trace syntax, required */
    uint32_t output;                /* enum mantra_session_output */
    const char *path;               /* FILE */
    int fd;                         /* FD */
    mantra_session_listener_fn listener; /* LISTENER */
    void *listener_ctx;
    uint32_t buffer_mb;             /* session cap; default 256 */
    uint64_t buffer_bytes;          /* when non-zero, the cap in bytes (wins over buffer_mb) */
    uint32_t sequence_point_mb;     /* sequence point every N MB of output; default 10; 0: default */
    uint32_t flush_interval_ms;     /* drain period; default 100 */
    uint32_t buffer_mode;           /* enum mantra_buffer_mode; default DROP */
    uint32_t block_timeout_ms;      /* BLOCK: longest wait for space per event; default 100 */
    uint64_t rundown_keywords;      /* rundown at stop with these keywords; 0: none */
    uint32_t start_rundown;         /* 1: rundown callbacks also run at start (StartRundown 0x40) */
    uint32_t rotate_mb;             /* FILE: roll over to a new file after N MB; 0: never */
    uint64_t rotate_bytes;          /* when non-zero, the rotation size in bytes (wins over rotate_mb) */
    const mantra_sink_callbacks *sink_callbacks; /* CALLBACKS: write required, flush/close optional */
    void *sink_ctx;                              /* CALLBACKS: passed to each callback */
} mantra_session_config;

enum mantra_buffer_mode {
    MANTRA_BUFFER_DROP = 0,  /* no space: the event is dropped and counted (EventPipe's default) */
    MANTRA_BUFFER_BLOCK = 1  /* no space: the writer waits up to block_timeout_ms for the drain,
                              * then drops; refused (MANTRA_EUNSUPPORTED) in the threadless build */
};

/* The rundown keywords the .NET runtime uses when rundown is requested without keywords
 * (dotnet/runtime, src/native/eventpipe/ep.c, ep_default_rundown_keyword): GC | Loader | Jit | NGen | EndRundown | JittedMethodILToNativeMap |
 * ThreadTransfer. */
#define MANTRA_DEFAULT_RUNDOWN_KEYWORDS UINT64_C(0x80020139)
#define MANTRA_RUNDOWN_PROVIDER "Microsoft-Windows-DotNETRuntimeRundown"
#define MANTRA_START_RUNDOWN_KEYWORD UINT64_C(0x40)

/* Rotation: file n of a rotating session (n = 0 is the configured path itself; n >= 1 inserts
 * ".n" before the extension of the last path component: trace.nettrace, trace.1.nettrace, ...).
 * Returns the length written, or a MANTRA_E* code (mantra/status.h): MANTRA_ERANGE when out (of
 * size bytes) is too small, MANTRA_EINVAL for a NULL argument. */
int mantra_session_rotated_path(const char *path, uint32_t n, char *out, size_t size);

void mantra_session_config_init(mantra_session_config *cfg);

/* Starts a session: parses the providers, opens the output, writes the trace header, starts the
 * drain thread and enables the events. */
int mantra_session_start(mantra_session_id *id, const mantra_session_config *cfg);

typedef struct mantra_session_stats {
    uint64_t attempted; /* writes that reached this session (sequence numbers consumed) */
    uint64_t written;   /* stored in a buffer */
    uint64_t dropped;   /* no buffer space (Drop mode) */
    uint64_t buffers;   /* buffers allocated */
    uint64_t bytes;     /* bytes handed to the output (nettrace outputs) */
    uint64_t oversized; /* payloads over 64 KB (refused and counted in dropped too) */
    uint64_t blocked;   /* BLOCK mode: writes that waited for space */
    uint32_t threads;   /* writing threads seen */
    uint32_t files;     /* files written (rotation); 1 without rotation, 0 for listener outputs */
    uint64_t buffer_bytes; /* bytes of thread buffers the session holds now (within its cap) */
} mantra_session_stats;

int mantra_session_get_stats(mantra_session_id id, mantra_session_stats *out);
/* Stops: ProcessInfo, disable, flush, final sequence point, end tag, close. */
int mantra_session_stop(mantra_session_id id);
/* The same, and the final counters in *out (NULL accepted). */
int mantra_session_stop_stats(mantra_session_id id, mantra_session_stats *out);

/* Stops session id when ms milliseconds have passed: a timer thread, or in the threadless build a
 * job of mantra_pump (mantra/pump.h) that checks the clock, so the stop happens at the first pump
 * after the deadline. The timer stops by id, and ids are never reused (they carry a generation), so
 * a timer left from a session stopped earlier never stops a later one; it ends early when its
 * session is stopped by someone else. mantra_shutdown cancels every timer before it stops the
 * sessions. MANTRA_OK; MANTRA_EINVAL (no such running session); MANTRA_ENOMEM. */
int mantra_session_stop_after(mantra_session_id id, uint32_t ms);

/* The session's bit number in mantra_event_state.enabled (0..62), or MANTRA_EINVAL (mantra/status.h)
 * for an unknown id. */
int mantra_session_bit(mantra_session_id id);

/* ---- stopping hooks and rundown ------------------------------------------------------- */

/* What hooks and rundown callbacks learn of a session; a copy, never a pointer into it. */
typedef struct mantra_session_info {
    mantra_session_id id;
    uint64_t mask;              /* the session's bit in mantra_event_state.enabled */
    uint64_t keywords;          /* union of the keywords of the session's provider entries */
    uint64_t rundown_keywords;  /* this rundown's keywords (hooks: the session's configured ones) */
} mantra_session_info;

/* A stopping hook runs on the stopping thread for every session that stops, after the id has been
 * validated and before the stop takes its locks; the session is still enabled, and every event the
 * hook writes from that thread goes into the stopping session only (not other sessions, not the
 * process listener). Use: flush final state (PGO tables, counters) into the trace. At most 16
 * hooks; MANTRA_ERANGE beyond. Adding the same (fn, ctx) twice is a no-op. */
typedef void (*mantra_session_stopping_fn)(void *ctx, const mantra_session_info *info);
int mantra_session_add_stopping_hook(mantra_session_stopping_fn fn, void *ctx);
int mantra_session_remove_stopping_hook(mantra_session_stopping_fn fn, void *ctx);

/* A start hook runs on the starting thread for every session that starts, once it is enabled (after
 * start rundown), with the session's provider entries (a copy owned by libmantra, valid during the
 * call; args holds each entry's ARGS). Use: start per-session work that a provider's ARGS ask for,
 * such as counters at EventCounterIntervalSec (mantra/counters.h). At most 16 hooks; MANTRA_ERANGE
 * beyond. Adding the same (fn, ctx) twice is a no-op. */
typedef void (*mantra_session_start_fn)(void *ctx, const mantra_session_info *info, const mantra_provider_spec *specs,
                                        size_t count);
int mantra_session_add_start_hook(mantra_session_start_fn fn, void *ctx);
int mantra_session_remove_start_hook(mantra_session_start_fn fn, void *ctx);

/* Runs fn(ctx, info) on the calling thread with every event that thread writes going into session id
 * only (as in a stopping hook: not other sessions, not the process listener), while the session is
 * running and its stop has not begun. Use: per-session events such as counters written at each
 * session's own interval. MANTRA_OK; MANTRA_EINVAL when id is no running session (fn not called). */
typedef void (*mantra_session_exclusive_fn)(void *ctx, const mantra_session_info *info);
int mantra_session_run_exclusive(mantra_session_id id, mantra_session_exclusive_fn fn, void *ctx);

/* Rundown callbacks run, for sessions with rundown_keywords != 0 that write a trace (file or fd),
 * at stop after the flush, and at start when start_rundown is set. While they run, the session's
 * only enabled entries are MANTRA_RUNDOWN_PROVIDER at Verbose with the rundown keywords (| 0x40
 * StartRundown at start) and a `*` entry if it has one; the events they write from the calling
 * thread go into that session only. At most 16 callbacks. */
enum mantra_rundown_phase { MANTRA_RUNDOWN_AT_START = 0, MANTRA_RUNDOWN_AT_STOP = 1 };
typedef void (*mantra_rundown_fn)(void *ctx, const mantra_session_info *info, int phase);
int mantra_rundown_register(mantra_rundown_fn fn, void *ctx);
int mantra_rundown_unregister(mantra_rundown_fn fn, void *ctx);

/* ---- process lifetime and startup tracing ------------------------------------------------ */

/* Startup tracing from the environment, as the .NET runtime reads the DOTNET_ ones:
 *   MANTRA_EnableEventPipe=1       start a file session,
 *   MANTRA_EventPipeConfig         providers (dotnet-trace syntax); empty: the .NET defaults,
 *   MANTRA_EventPipeOutputPath     default "trace.nettrace"; "{pid}" becomes the process id,
 *   MANTRA_EventPipeCircularMB     buffer cap in MB (0 becomes 1; default 256),
 * with rundown (MANTRA_DEFAULT_RUNDOWN_KEYWORDS) at stop. Registers mantra_shutdown with atexit
 * once. Idempotent. Returns 0 (also when the variables ask for nothing) or a negative MANTRA_E*
 * code with the reason in mantra_session_last_error().
 * Then it starts the diagnostics server (mantra/diag.h, docs/diagnostics.md) unless
 * MANTRA_EnableDiagnostics=0; a malformed MANTRA_DiagnosticPorts fails it with MANTRA_EINVAL, and
 * suspending ports hold it until a tool sends ResumeRuntime. */
int mantra_init(void);
/* The session mantra_init started, or 0. */
mantra_session_id mantra_startup_session(void);
/* Expands an output path template into out (size bytes): every "{pid}" becomes this process's id,
 * and, when n is not 0, every "{n}" becomes n (a collection's number in the process: the PGO
 * collections of mantra/dotnet_pgo.h number theirs from 1). Returns the length; MANTRA_ERANGE
 * (out "") when it does not fit; MANTRA_EINVAL for NULL arguments or size 0. */
int mantra_output_path_expand(const char *tmpl, uint64_t n, char *out, size_t size);
/* Stops every running session (each trace ends with its end-of-stream tag) and runs the queued
 * jobs once. Safe to call more than once and from atexit. */
void mantra_shutdown(void);
/* Stops every running session; returns how many. */
uint32_t mantra_session_stop_all(void);

/* Text of the calling thread's last session error ("" when none). */
const char *mantra_session_last_error(void);

MANTRA_END_DECLS

#endif /* MANTRA_SESSION_H */
