/* counters-internal.h - what the files of runtime/src/counters/ share (prefix ct_). Private.
 *
 * Files: registry.c (the counter table, set/add/read, the built-in counters and the host's heap
 * figures), event.c (the Mantra.Runtime provider, its two EventCounters event shapes and their
 * payloads), sessions.c (per-session intervals from the session start and stopping hooks, the
 * ticks, the timer thread or pumped job, init and shutdown).
 *
 * Locks: the table lock (ct_table_lock, a spin lock) guards the counter table's slots; values are
 * atomics. sessions.c's tick lock serialises ticks with session start and stop; read callbacks run
 * under it, never under the table lock. */
#ifndef MANTRA_COUNTERS_INTERNAL_H
#define MANTRA_COUNTERS_INTERNAL_H

#include <stdatomic.h>
#include <stdint.h>

#include "mantra/counters.h"
#include "mantra/session.h"

struct mantra_counter {
    int used;      /* table lock */
    int builtin;   /* table lock: never unregistered */
    uint32_t gen;  /* table lock: bumped at every registration of this slot */
    char name[64], display[128], units[32];
    uint32_t kind;
    mantra_counter_read_fn read;
    void *ctx;
    _Atomic uint64_t bits; /* the double given to set/add */
};

/* A counter as one tick sees it (copied under the table lock). */
typedef struct ct_snapshot {
    uint32_t slot, gen, kind;
    char name[64], display[128], units[32];
    mantra_counter_read_fn read;
    void *ctx;
    mantra_counter *c;
} ct_snapshot;

/* ---- registry.c ---- */
void ct_set_error(const char *msg);
/* The registered counters, in slot order; returns how many (at most MANTRA_COUNTERS_MAX). */
uint32_t ct_snapshot_all(ct_snapshot *out);
/* The counter's value now: its read callback, or the stored value. */
double ct_read(const ct_snapshot *s);
/* Creates the built-in counters once. */
int ct_builtins_init(void);
/* Events the counters layer wrote itself (not counted in events-written / events-dropped). */
extern _Atomic uint64_t ct_self_written, ct_self_dropped;

/* ---- event.c ---- */
/* Builds the event metadata and registers the provider once. */
int ct_provider_init(void);
/* 1 when these session entries enable the EventCounters events, with in *interval_ms the entry's
 * EventCounterIntervalSec (milliseconds, at least MANTRA_COUNTERS_MIN_INTERVAL_MS); else 0. */
int ct_interval_of(const mantra_provider_spec *specs, size_t count, uint32_t *interval_ms);
/* Writes one EventCounters event (into the sessions the calling thread's events go to) and counts
 * it in ct_self_*. value: the mean, or the increment of a RATE counter. */
int ct_write_counter(const ct_snapshot *s, double value, float interval_sec, uint32_t interval_ms);

/* ---- sessions.c ---- */
/* Running sessions seen by the start hook (ids into out, at most cap); returns how many. */
uint32_t ct_session_ids(mantra_session_id *out, uint32_t cap);

#endif /* MANTRA_COUNTERS_INTERNAL_H */
