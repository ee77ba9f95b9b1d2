/* The counter table (mantra/counters.h): registration, values, the built-in counters and the heap
 * figures the host supplies. Slots change under a spin lock (registration is rare); values are
 * atomic doubles (their bits in a uint64), so set/add never lock. */
#include <stdio.h>
#include <string.h>

#include "counters-internal.h"
#include "mantra/event.h"
#include "mantra/interp.h"

static struct mantra_counter g_table[MANTRA_COUNTERS_MAX];
static atomic_flag g_table_lock = ATOMIC_FLAG_INIT;
static _Thread_local char g_err[160];
_Atomic uint64_t ct_self_written, ct_self_dropped;

const char *mantra_counters_last_error(void) { return g_err; }
void ct_set_error(const char *msg) { snprintf(g_err, sizeof g_err, "%s", msg); }

static void table_lock(void) {
    while (atomic_flag_test_and_set_explicit(&g_table_lock, memory_order_acquire))
        ;
}
static void table_unlock(void) { atomic_flag_clear_explicit(&g_table_lock, memory_order_release); }

static uint64_t bits_of(double v) {
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}
static double double_of(uint64_t b) {
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
}

static int name_ok(const char *n) {
    size_t len = n ? strlen(n) : 0;
    if (len == 0 || len >= sizeof g_table[0].name)
        return 0;
    for (size_t i = 0; i < len; i++) {
        char c = n[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
              c == '-'))
            return 0;
    }
    return 1;
}

static int add(const mantra_counter_def *d, int builtin, mantra_counter **out) {
    if (!d || !out)
        return ct_set_error("NULL argument"), MANTRA_EINVAL;
    *out = NULL;
    if (!name_ok(d->name))
        return ct_set_error("counter name must be 1..63 bytes of [A-Za-z0-9._-]"), MANTRA_EINVAL;
    if (d->kind > MANTRA_COUNTER_RATE)
        return ct_set_error("unknown counter kind"), MANTRA_EINVAL;
    const char *display = d->display_name ? d->display_name : "", *units = d->units ? d->units : "";
    if (strlen(display) >= sizeof g_table[0].display || strlen(units) >= sizeof g_table[0].units)
        return ct_set_error("display name (127 bytes) or units (31 bytes) too long"), MANTRA_EINVAL;
    table_lock();
    mantra_counter *free_slot = NULL;
    for (uint32_t i = 0; i < MANTRA_COUNTERS_MAX; i++) {
        if (g_table[i].used && strcmp(g_table[i].name, d->name) == 0) {
            table_unlock();
            return ct_set_error("a counter of this name exists"), MANTRA_EINVAL;
        }
        if (!g_table[i].used && !free_slot)
            free_slot = &g_table[i];
    }
    if (!free_slot) {
        table_unlock();
        return ct_set_error("too many counters (64)"), MANTRA_ENOSPC;
    }
    mantra_counter *c = free_slot;
    snprintf(c->name, sizeof c->name, "%s", d->name);
    snprintf(c->display, sizeof c->display, "%s", display);
    snprintf(c->units, sizeof c->units, "%s", units);
    c->kind = d->kind;
    c->read = d->read;
    c->ctx = d->ctx;
    c->builtin = builtin;
    c->gen++;
    atomic_store_explicit(&c->bits, bits_of(0.0), memory_order_relaxed);
    c->used = 1;
    table_unlock();
    *out = c;
    return MANTRA_OK;
}

int mantra_counter_register(const mantra_counter_def *def, mantra_counter **out) { return add(def, 0, out); }

int mantra_counter_unregister(mantra_counter *c) {
    if (!c)
        return ct_set_error("NULL argument"), MANTRA_EINVAL;
    table_lock();
    int rc = c->used && !c->builtin ? MANTRA_OK : MANTRA_EINVAL;
    if (!rc)
        c->used = 0;
    table_unlock();
    if (rc)
        ct_set_error("not a registered host counter");
    return rc;
}

void mantra_counter_set(mantra_counter *c, double value) {
    if (c)
        atomic_store_explicit(&c->bits, bits_of(value), memory_order_relaxed);
}

void mantra_counter_add(mantra_counter *c, double delta) {
    if (!c)
        return;
    uint64_t old = atomic_load_explicit(&c->bits, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(&c->bits, &old, bits_of(double_of(old) + delta),
                                                  memory_order_relaxed, memory_order_relaxed))
        ;
}

double mantra_counter_value(const mantra_counter *c) {
    if (!c)
        return 0.0;
    table_lock();
    mantra_counter_read_fn read = c->read;
    void *ctx = c->ctx;
    table_unlock();
    return read ? read(ctx) : double_of(atomic_load_explicit(&c->bits, memory_order_relaxed));
}

mantra_counter *mantra_counter_find(const char *name) {
    mantra_counter *found = NULL;
    table_lock();
    for (uint32_t i = 0; name && i < MANTRA_COUNTERS_MAX && !found; i++)
        if (g_table[i].used && strcmp(g_table[i].name, name) == 0)
            found = &g_table[i];
    table_unlock();
    return found;
}

uint32_t ct_snapshot_all(ct_snapshot *out) {
    uint32_t n = 0;
    table_lock();
    for (uint32_t i = 0; i < MANTRA_COUNTERS_MAX; i++) {
        const mantra_counter *c = &g_table[i];
        if (!c->used)
            continue;
        ct_snapshot *s = &out[n++];
        s->slot = i;
        s->gen = c->gen;
        s->kind = c->kind;
        memcpy(s->name, c->name, sizeof s->name);
        memcpy(s->display, c->display, sizeof s->display);
        memcpy(s->units, c->units, sizeof s->units);
        s->read = c->read;
        s->ctx = c->ctx;
        s->c = &g_table[i];
    }
    table_unlock();
    return n;
}

double ct_read(const ct_snapshot *s) {
    return s->read ? s->read(s->ctx) : double_of(atomic_load_explicit(&s->c->bits, memory_order_relaxed));
}

/* ---- built-in counters ------------------------------------------------------------------------ */

static _Atomic uint64_t g_heap_bytes, g_heap_committed, g_heap_allocated;

void mantra_counters_set_heap(const mantra_heap_figures *f) {
    if (!f)
        return;
    atomic_store_explicit(&g_heap_bytes, f->heap_bytes, memory_order_relaxed);
    atomic_store_explicit(&g_heap_committed, f->committed_bytes, memory_order_relaxed);
    atomic_store_explicit(&g_heap_allocated, f->allocated_bytes, memory_order_relaxed);
}

static double read_u64(void *ctx) { return (double)atomic_load_explicit((_Atomic uint64_t *)ctx, memory_order_relaxed); }

/* Events written into sessions (mantra_get_write_counters), less the counter events themselves. */
static double read_written(void *ctx) {
    (void)ctx;
    mantra_write_counters w;
    mantra_get_write_counters(&w);
    return (double)(w.written - atomic_load_explicit(&ct_self_written, memory_order_relaxed));
}

static double read_dropped(void *ctx) {
    (void)ctx;
    mantra_write_counters w;
    mantra_get_write_counters(&w);
    return (double)(w.dropped + w.too_large + w.bad_string - atomic_load_explicit(&ct_self_dropped, memory_order_relaxed));
}

static double read_sessions(void *ctx) {
    (void)ctx;
    mantra_session_id ids[MANTRA_MAX_SESSIONS];
    return (double)ct_session_ids(ids, MANTRA_MAX_SESSIONS);
}

static double read_buffer_bytes(void *ctx) {
    (void)ctx;
    mantra_session_id ids[MANTRA_MAX_SESSIONS];
    uint32_t n = ct_session_ids(ids, MANTRA_MAX_SESSIONS);
    uint64_t sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        mantra_session_stats st;
        if (mantra_session_get_stats(ids[i], &st) == MANTRA_OK)
            sum += st.buffer_bytes;
    }
    return (double)sum;
}

static double read_interp_calls(void *ctx) {
    (void)ctx;
    return (double)mantra_interp_calls_total();
}

static double read_interp_insns(void *ctx) {
    (void)ctx;
    return (double)mantra_interp_instructions_total();
}

int ct_builtins_init(void) {
    static int done; /* under mantra_counters_init's lock */
    if (done)
        return MANTRA_OK;
    static const mantra_counter_def defs[] = {
        {"events-written", "Events Written", "", MANTRA_COUNTER_RATE, read_written, NULL},
        {"events-dropped", "Events Dropped", "", MANTRA_COUNTER_RATE, read_dropped, NULL},
        {"sessions", "Sessions Running", "", MANTRA_COUNTER_MEAN, read_sessions, NULL},
        {"session-buffer-bytes", "Session Buffer Size", "B", MANTRA_COUNTER_MEAN, read_buffer_bytes, NULL},
        {"heap-size", "Heap Size", "B", MANTRA_COUNTER_MEAN, read_u64, &g_heap_bytes},
        {"heap-committed", "Heap Committed", "B", MANTRA_COUNTER_MEAN, read_u64, &g_heap_committed},
        {"alloc-rate", "Allocation Rate", "B", MANTRA_COUNTER_RATE, read_u64, &g_heap_allocated},
        {"interp-calls", "Interpreter Calls", "", MANTRA_COUNTER_RATE, read_interp_calls, NULL},
        {"interp-instructions", "Interpreter Instructions", "", MANTRA_COUNTER_RATE, read_interp_insns, NULL},
    };
    for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++) {
        mantra_counter *c;
        int rc = add(&defs[i], 1, &c);
        if (rc)
            return rc;
    }
    done = 1;
    return MANTRA_OK;
}
