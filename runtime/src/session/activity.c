/* Activity ids (mantra/activity.h): kept in the calling thread's record, which the write path has
 * at hand already, so that an event of a thread without ids pays one test of has_activity and an
 * event of a thread with ids gets them in its record extension (dispatch.c, fill_ext). Semantics
 * as EventSource's SetCurrentThreadActivityId and ActivityTracker's OnStart/OnStop (dotnet/runtime,
 * src/libraries/System.Private.CoreLib/src/System/Diagnostics/Tracing/EventSource.cs and
 * ActivityTracker.cs): thread-local, a start installs a new id and a stop restores the previous. */
#include <string.h>

#include "common/le-internal.h"
#include "mantra/activity.h"
#include "session-internal.h"

static const mantra_guid zero_id;

static int is_zero(const mantra_guid *g) { return g == NULL || memcmp(g, &zero_id, sizeof zero_id) == 0; }

void ss_activity_reset(thread_rec *r) {
    r->has_activity = 0;
    r->activity = zero_id;
    r->related = zero_id;
}

static void update_flag(thread_rec *r) { r->has_activity = !is_zero(&r->activity) || !is_zero(&r->related); }

void mantra_activity_get(mantra_guid *out) {
    thread_rec *r = ss_current_rec();
    *out = r ? r->activity : zero_id;
}

void mantra_activity_get_related(mantra_guid *out) {
    thread_rec *r = ss_current_rec();
    *out = r ? r->related : zero_id;
}

static int set_one(int related, const mantra_guid *id, mantra_guid *previous) {
    thread_rec *r = ss_current_rec();
    if (r == NULL) {
        if (previous)
            *previous = zero_id;
        return MANTRA_ENOMEM;
    }
    mantra_guid *slot = related ? &r->related : &r->activity;
    if (previous)
        *previous = *slot;
    *slot = is_zero(id) ? zero_id : *id;
    update_flag(r);
    return MANTRA_OK;
}

int mantra_activity_set(const mantra_guid *id, mantra_guid *previous) { return set_one(0, id, previous); }

int mantra_activity_set_related(const mantra_guid *id, mantra_guid *previous) { return set_one(1, id, previous); }

/* Unique per process: a counter in Data1 and Data2 (never 0: it starts at 1), the process id in
 * Data3 and the first four Data4 bytes (low 16 bits, high 16 bits), the start time (ms) in the
 * other Data4 bytes, so ids of two processes differ too. */
void mantra_activity_new_id(mantra_guid *out) {
    static _Atomic uint64_t counter;
    static _Atomic int64_t start_ms;
    int64_t ms = atomic_load_explicit(&start_ms, memory_order_relaxed);
    if (ms == 0) {
        int64_t now = mantra_pal_unix_ms();
        int64_t expected = 0;
        ms = atomic_compare_exchange_strong(&start_ms, &expected, now) ? now : expected;
    }
    uint64_t n = atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed) + 1u;
    uint32_t pid = mantra_pal_pid();
    out->data1 = (uint32_t)n;
    out->data2 = (uint16_t)(n >> 32);
    out->data3 = (uint16_t)pid;
    out->data4[0] = (uint8_t)(pid >> 16);
    out->data4[1] = (uint8_t)(pid >> 24);
    for (int i = 0; i < 6; i++)
        out->data4[2 + i] = (uint8_t)((uint64_t)ms >> (8 * i));
}

/* One number of an activity path at b[at]: its length nibble (low half 0: no high bits) and bytes. */
static size_t put_path_number(uint8_t *b, size_t at, uint32_t v) {
    size_t k = v > 0xFFFFFFu ? 4 : v > 0xFFFFu ? 3 : v > 0xFFu ? 2 : 1;
    b[at++] = (uint8_t)((0xCu + k - 1) << 4);
    for (size_t i = 0; i < k; i++)
        b[at++] = (uint8_t)(v >> (8 * i));
    return at;
}

void mantra_activity_path_id(uint64_t n, mantra_guid *out) {
    uint8_t b[16] = {0}; /* at most 10 bytes of numbers, then the 0 end nibble */
    size_t at = n >> 32 ? put_path_number(b, 0, (uint32_t)(n >> 32)) : 0;
    put_path_number(b, at, (uint32_t)n);
    uint32_t sum = mantra_load_u32(b) + mantra_load_u32(b + 4) + mantra_load_u32(b + 8) + 0x599D99ADu;
    cm_store_u32(b + 12, sum ^ mantra_pal_pid());
    cm_load_guid(out, b);
}

int mantra_activity_start(mantra_activity_scope *scope, mantra_guid *id) {
    if (scope == NULL)
        return MANTRA_EINVAL;
    thread_rec *r = ss_current_rec();
    if (r == NULL)
        return MANTRA_ENOMEM;
    scope->previous = r->activity;
    scope->previous_related = r->related;
    mantra_guid n;
    mantra_activity_new_id(&n);
    r->related = r->activity;
    r->activity = n;
    update_flag(r);
    if (id)
        *id = n;
    return MANTRA_OK;
}

void mantra_activity_stop(const mantra_activity_scope *scope) {
    thread_rec *r = ss_current_rec();
    if (scope == NULL || r == NULL)
        return;
    r->activity = scope->previous;
    r->related = scope->previous_related;
    update_flag(r);
}
