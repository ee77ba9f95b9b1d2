/* mantra/counters.h - EventCounters: live counter values that `dotnet-counters monitor` shows.
 *
 * A built-in provider, MANTRA_COUNTERS_PROVIDER ("Mantra.Runtime"), writes the `EventCounters`
 * event of .NET's EventSource counters (dotnet/runtime, src/libraries/System.Private.CoreLib/src/
 * System/Diagnostics/Tracing/CounterPayload.cs, PollingCounter.cs, IncrementingPollingCounter.cs)
 * into every session whose entry for it carries the argument EventCounterIntervalSec=N (N seconds,
 * a decimal number > 0; the entry `Mantra.Runtime:0:5:EventCounterIntervalSec=1`, or what
 * `dotnet-counters monitor --counters Mantra.Runtime` sends), one event per counter every N seconds,
 * each session at its own interval, until it stops. docs/counters.md has the payload layout.
 *
 *   mantra_counters_init();               before the sessions that should see counters start
 *   mantra_counter_def d = {"queue-length", "Queue Length", "", MANTRA_COUNTER_MEAN, NULL, NULL};
 *   mantra_counter *c; mantra_counter_register(&d, &c);   ...   mantra_counter_set(c, 42);
 *
 * Built-in counters (name, kind, units): events-written (rate: events written into sessions, these
 * counter events not included), events-dropped (rate: dropped, too large or invalid), sessions
 * (mean: running sessions), session-buffer-bytes (mean, B: thread buffers held by all sessions),
 * and the host's heap figures (mantra_counters_set_heap): heap-size (mean, B), heap-committed
 * (mean, B), alloc-rate (rate, B: bytes allocated). Sessions started before mantra_counters_init
 * are not counted and get no counters.
 *
 * Timing: one timer thread for all sessions, or in the threadless build a job of mantra_pump
 * (mantra/pump.h) that writes what is due at each pump. Read callbacks run on that thread, one
 * at a time; they must not start or stop sessions nor call mantra_counters_shutdown.
 *
 * Errors: 0 or a negative MANTRA_E* code (mantra/status.h), text in mantra_counters_last_error().
 */
#ifndef MANTRA_COUNTERS_H
#define MANTRA_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

#include "mantra/status.h"

MANTRA_BEGIN_DECLS

#define MANTRA_COUNTERS_PROVIDER "Mantra.Runtime"
/* Counters at once, built-in ones included. */
#define MANTRA_COUNTERS_MAX 64u
/* Shortest interval: EventCounterIntervalSec below 0.01 is taken as 0.01. */
#define MANTRA_COUNTERS_MIN_INTERVAL_MS 10u

enum mantra_counter_kind {
    MANTRA_COUNTER_MEAN = 0, /* a gauge: each event carries the value now (CounterType "Mean") */
    MANTRA_COUNTER_RATE = 1  /* a running total: each event carries its increase over the interval
                              * (CounterType "Sum"; dotnet-counters shows it per second) */
};

/* Reads the counter's value (MEAN) or running total (RATE). */
typedef double (*mantra_counter_read_fn)(void *ctx);

typedef struct mantra_counter_def {
    const char *name;         /* Name: 1..63 bytes of [A-Za-z0-9._-], unique */
    const char *display_name; /* DisplayName, up to 127 bytes; NULL: "" */
    const char *units;        /* DisplayUnits ("B", "ms", ...), up to 31 bytes; NULL: "" */
    uint32_t kind;            /* enum mantra_counter_kind */
    mantra_counter_read_fn read; /* NULL: the value given to mantra_counter_set / _add */
    void *ctx;
} mantra_counter_def;

typedef struct mantra_counter mantra_counter;

/* Registers the provider and the session hooks and creates the built-in counters. Idempotent.
 * MANTRA_OK, or a MANTRA_E* code. */
int mantra_counters_init(void);
/* Stops writing counters (every session's timer), ends the timer thread and removes the hooks;
 * counters stay registered. mantra_counters_init starts again. */
void mantra_counters_shutdown(void);

/* Adds a counter (strings copied); *out is its handle until mantra_counter_unregister.
 * MANTRA_EINVAL (bad name or kind, name taken), MANTRA_ENOSPC (MANTRA_COUNTERS_MAX reached). */
int mantra_counter_register(const mantra_counter_def *def, mantra_counter **out);
/* Removes a counter registered by the host (built-in ones stay); the handle becomes invalid. */
int mantra_counter_unregister(mantra_counter *c);
/* The counter's value (MEAN) or running total (RATE), for counters without a read callback.
 * Lock-free; any thread. */
void mantra_counter_set(mantra_counter *c, double value);
void mantra_counter_add(mantra_counter *c, double delta);
/* The value the next event would carry for a MEAN counter, or the running total of a RATE one. */
double mantra_counter_value(const mantra_counter *c);
/* The counter named name (built-in or host), or NULL. */
mantra_counter *mantra_counter_find(const char *name);

/* Heap figures the host's allocator supplies (no GC involved); each field replaces the last one. */
typedef struct mantra_heap_figures {
    uint64_t heap_bytes;      /* in use now */
    uint64_t committed_bytes; /* reserved from the OS now */
    uint64_t allocated_bytes; /* allocated since start (running total) */
} mantra_heap_figures;
void mantra_counters_set_heap(const mantra_heap_figures *figures);

/* Text of the calling thread's last counters error ("" when none). */
const char *mantra_counters_last_error(void);

MANTRA_END_DECLS

#endif /* MANTRA_COUNTERS_H */
