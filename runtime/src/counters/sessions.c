/* Counters per session (mantra/counters.h): the session start hook reads each session's
 * EventCounterIntervalSec and the stopping hook ends its ticks; a tick writes one EventCounters
 * event per counter into that session only (mantra_session_run_exclusive), so each session gets
 * its own interval, and its Series says so. Timing as .NET's CounterGroup (dotnet/runtime,
 * src/libraries/System.Private.CoreLib/src/System/Diagnostics/Tracing/CounterGroup.cs): rate
 * counters take their base value when the session starts, IntervalSec is the time since the last
 * tick, and a late tick skips the intervals it missed. One timer thread serves every session (a
 * mantra_pump job in the threadless build). */
#include <stdlib.h>
#include <string.h>

#include "counters-internal.h"
#include "mantra/pump.h"
#include "platform/platform-internal.h"

typedef struct ct_entry {
    mantra_session_id id;
    uint32_t interval_ms;
    uint64_t last_ns, due_ns;
    double prev[MANTRA_COUNTERS_MAX]; /* RATE counters: the running total at the last tick */
    uint32_t prev_gen[MANTRA_COUNTERS_MAX]; /* the slot's generation prev belongs to (0: none) */
} ct_entry;

/* Tick lock: the entries, and every tick. */
static mantra_pal_mutex g_tick;
static mantra_pal_cond g_wake;
static ct_entry *g_entries[MANTRA_MAX_SESSIONS];
static uint32_t g_nentries;
static int g_quit;
#ifdef MANTRA_THREADLESS
static int g_job_queued; /* tick lock */
#else
static mantra_pal_thread g_thread;
static int g_has_thread; /* init lock */
#endif
static atomic_flag g_init_lock = ATOMIC_FLAG_INIT;
static int g_inited, g_lock_ready; /* init lock */

/* Every running session the start hook has seen (ids lock: read by the built-in counters). */
static atomic_flag g_ids_lock = ATOMIC_FLAG_INIT;
static mantra_session_id g_ids[MANTRA_MAX_SESSIONS];
static uint32_t g_nids;

static void ids_lock(void) {
    while (atomic_flag_test_and_set_explicit(&g_ids_lock, memory_order_acquire))
        ;
}
static void ids_unlock(void) { atomic_flag_clear_explicit(&g_ids_lock, memory_order_release); }

static void ids_remove(mantra_session_id id);

/* A session that stopped while its start hooks ran (a stop racing the start) left its id behind:
 * ids that no longer name a running session are dropped here. */
uint32_t ct_session_ids(mantra_session_id *out, uint32_t cap) {
    ids_lock();
    uint32_t n = g_nids < cap ? g_nids : cap;
    memcpy(out, g_ids, n * sizeof *out);
    ids_unlock();
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (mantra_session_bit(out[i]) >= 0)
            out[k++] = out[i];
        else
            ids_remove(out[i]);
    }
    return k;
}

static void ids_add(mantra_session_id id) {
    ids_lock();
    if (g_nids < MANTRA_MAX_SESSIONS)
        g_ids[g_nids++] = id;
    ids_unlock();
}

static void ids_remove(mantra_session_id id) {
    ids_lock();
    for (uint32_t i = 0; i < g_nids; i++)
        if (g_ids[i] == id) {
            g_ids[i] = g_ids[--g_nids];
            break;
        }
    ids_unlock();
}

/* ---- ticks ----------------------------------------------------------------------------------- */

typedef struct tick_ctx {
    ct_entry *e;
    float interval_sec;
} tick_ctx;

/* RATE counters: the base totals (a session start, or a counter first seen by this session). */
static void take_base(ct_entry *e, const ct_snapshot *s, double total) {
    e->prev[s->slot] = total;
    e->prev_gen[s->slot] = s->gen;
}

static void write_all(void *arg, const mantra_session_info *info) {
    (void)info;
    tick_ctx *t = arg;
    ct_snapshot snaps[MANTRA_COUNTERS_MAX];
    uint32_t n = ct_snapshot_all(snaps);
    for (uint32_t i = 0; i < n; i++) {
        const ct_snapshot *s = &snaps[i];
        double v = ct_read(s);
        if (s->kind == MANTRA_COUNTER_RATE) {
            double total = v;
            v = t->e->prev_gen[s->slot] == s->gen ? total - t->e->prev[s->slot] : 0.0;
            take_base(t->e, s, total);
        }
        (void)ct_write_counter(s, v, t->interval_sec, t->e->interval_ms);
    }
}

static void remove_at(uint32_t i) {
    free(g_entries[i]);
    g_entries[i] = g_entries[--g_nentries];
}

/* Writes every due session's counters (tick lock held); returns the nearest due time. */
static uint64_t tick_due(uint64_t now) {
    uint64_t next = UINT64_MAX;
    for (uint32_t i = 0; i < g_nentries;) {
        ct_entry *e = g_entries[i];
        if (e->due_ns <= now) {
            uint64_t step = (uint64_t)e->interval_ms * 1000000u;
            tick_ctx t = {e, (float)((double)(now - e->last_ns) / 1e9)};
            e->last_ns = now;
            do
                e->due_ns += step;
            while (e->due_ns <= now);
            if (mantra_session_run_exclusive(e->id, write_all, &t) != MANTRA_OK) {
                remove_at(i); /* its stop has begun: no more ticks */
                continue;
            }
        }
        if (e->due_ns < next)
            next = e->due_ns;
        i++;
    }
    return next;
}

#ifdef MANTRA_THREADLESS
static int tick_job(void *arg) {
    (void)arg;
    mantra_pal_mutex_lock(&g_tick);
    int done = g_quit || g_nentries == 0;
    if (done)
        g_job_queued = 0;
    else
        (void)tick_due(mantra_pal_now_ns());
    mantra_pal_mutex_unlock(&g_tick);
    return done ? MANTRA_JOB_DONE : MANTRA_JOB_AGAIN;
}

/* Tick lock held. */
static void wake_locked(void) {
    if (!g_job_queued && mantra_queue_job(tick_job, NULL) == MANTRA_OK)
        g_job_queued = 1;
}
#else
static void timer_main(void *arg) {
    (void)arg;
    mantra_pal_mutex_lock(&g_tick);
    while (!g_quit) {
        uint64_t now = mantra_pal_now_ns();
        uint64_t next = tick_due(now);
        now = mantra_pal_now_ns();
        uint64_t wait_ms = next == UINT64_MAX ? 1000u : next <= now ? 0u : (next - now + 999999u) / 1000000u;
        if (wait_ms > 0)
            mantra_pal_cond_timedwait(&g_wake, &g_tick, (uint32_t)(wait_ms < 1000u ? wait_ms : 1000u));
    }
    mantra_pal_mutex_unlock(&g_tick);
}

static void wake_locked(void) { mantra_pal_cond_signal(&g_wake); }
#endif

/* ---- session hooks ----------------------------------------------------------------------------- */

static void on_start(void *ctx, const mantra_session_info *info, const mantra_provider_spec *specs, size_t count) {
    (void)ctx;
    ids_add(info->id);
    uint32_t ms;
    if (!ct_interval_of(specs, count, &ms))
        return;
    ct_entry *e = calloc(1, sizeof *e);
    if (!e)
        return; /* out of memory: this session gets no counters */
    e->id = info->id;
    e->interval_ms = ms;
    mantra_pal_mutex_lock(&g_tick);
    e->last_ns = mantra_pal_now_ns();
    e->due_ns = e->last_ns + (uint64_t)ms * 1000000u;
    ct_snapshot snaps[MANTRA_COUNTERS_MAX];
    uint32_t n = ct_snapshot_all(snaps);
    for (uint32_t i = 0; i < n; i++)
        if (snaps[i].kind == MANTRA_COUNTER_RATE)
            take_base(e, &snaps[i], ct_read(&snaps[i]));
    if (g_nentries < MANTRA_MAX_SESSIONS && !g_quit) {
        g_entries[g_nentries++] = e;
        e = NULL;
        wake_locked();
    }
    mantra_pal_mutex_unlock(&g_tick);
    free(e);
}

static void on_stopping(void *ctx, const mantra_session_info *info) {
    (void)ctx;
    ids_remove(info->id);
    mantra_pal_mutex_lock(&g_tick); /* waits for a tick in progress */
    for (uint32_t i = 0; i < g_nentries; i++)
        if (g_entries[i]->id == info->id) {
            remove_at(i);
            break;
        }
    mantra_pal_mutex_unlock(&g_tick);
}

/* ---- init / shutdown --------------------------------------------------------------------------- */

static void init_lock(void) {
    while (atomic_flag_test_and_set_explicit(&g_init_lock, memory_order_acquire))
        mantra_pal_yield();
}
static void init_unlock(void) { atomic_flag_clear_explicit(&g_init_lock, memory_order_release); }

static int init_locked(void) {
    if (g_inited)
        return MANTRA_OK;
    if (!g_lock_ready) {
        if (mantra_pal_mutex_init(&g_tick) != 0)
            return ct_set_error("out of memory"), MANTRA_ENOMEM;
        if (mantra_pal_cond_init(&g_wake) != 0) {
            mantra_pal_mutex_destroy(&g_tick);
            return ct_set_error("out of memory"), MANTRA_ENOMEM;
        }
        g_lock_ready = 1;
    }
    int rc = ct_provider_init();
    if (!rc)
        rc = ct_builtins_init();
    if (rc)
        return rc;
    g_quit = 0;
#ifndef MANTRA_THREADLESS
    if (mantra_pal_thread_start(&g_thread, timer_main, NULL) != 0)
        return ct_set_error("cannot start the counters thread"), MANTRA_ENOMEM;
    g_has_thread = 1;
#endif
    if ((rc = mantra_session_add_start_hook(on_start, NULL)) == 0 &&
        (rc = mantra_session_add_stopping_hook(on_stopping, NULL)) != 0)
        (void)mantra_session_remove_start_hook(on_start, NULL);
    if (rc) {
        ct_set_error(mantra_session_last_error());
        return rc;
    }
    g_inited = 1;
    return MANTRA_OK;
}

static void shutdown_locked(void) {
    if (!g_lock_ready)
        return;
    (void)mantra_session_remove_start_hook(on_start, NULL);
    (void)mantra_session_remove_stopping_hook(on_stopping, NULL);
    mantra_pal_mutex_lock(&g_tick);
    g_quit = 1;
    while (g_nentries)
        remove_at(0);
    mantra_pal_cond_signal(&g_wake);
    mantra_pal_mutex_unlock(&g_tick);
#ifndef MANTRA_THREADLESS
    if (g_has_thread)
        mantra_pal_thread_join(&g_thread);
    g_has_thread = 0;
#endif
    ids_lock();
    g_nids = 0;
    ids_unlock();
    g_inited = 0;
}

int mantra_counters_init(void) {
    init_lock();
    int rc = init_locked();
    if (rc)
        shutdown_locked();
    init_unlock();
    return rc;
}

void mantra_counters_shutdown(void) {
    init_lock();
    shutdown_locked();
    init_unlock();
}
