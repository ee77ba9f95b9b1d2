/* Start hooks, stopping hooks and rundown callbacks (mantra/session.h): their tables (at most MAX_HOOKS each,
 * under the session table's lock), registration, and running them on the calling thread with the
 * thread's events going into one session only. Rundown as EventPipe's (dotnet/runtime,
 * src/native/eventpipe/ep-session.c, ep_session_enable_rundown and ep_session_execute_rundown; ep.c,
 * disable_holding_lock). */
#include <string.h>

#include "session-internal.h"

/* Stopping hooks and rundown callbacks (table lock): function pointers of either type, stored as a
 * generic one and cast back where they are called. mantra_session_run_exclusive lives here too: it
 * is the stopping hooks' one-session mode, for any caller. */
typedef struct any_cb {
    void (*fn)(void);
    void *ctx;
} any_cb;
static any_cb g_hooks[MAX_HOOKS], g_rundowns[MAX_HOOKS], g_starts[MAX_HOOKS];
static uint32_t g_nhooks, g_nrundowns, g_nstarts; /* table lock */

static void info_of(const session *s, mantra_session_info *info) {
    info->id = s->id;
    info->mask = UINT64_C(1) << s->index;
    info->keywords = s->keywords;
    info->rundown_keywords = s->cfg.rundown_keywords;
}

/* A copy of a callback table taken under the table lock: the callbacks run without it. */
static uint32_t cb_snapshot(any_cb *dst, const any_cb *src, const uint32_t *n) {
    ss_ctl_lock();
    uint32_t k = *n;
    memcpy(dst, src, k * sizeof *dst);
    ss_ctl_unlock();
    return k;
}

void ss_run_rundown(session *s, int phase) {
    any_cb cbs[MAX_HOOKS];
    uint32_t n = cb_snapshot(cbs, g_rundowns, &g_nrundowns);
    mantra_session_info info;
    info_of(s, &info);
    if (phase == MANTRA_RUNDOWN_AT_START)
        info.rundown_keywords |= MANTRA_START_RUNDOWN_KEYWORD;
    session *saved = ss_set_exclusive(s);
    for (uint32_t i = 0; i < n; i++)
        ((mantra_rundown_fn)cbs[i].fn)(cbs[i].ctx, &info, phase);
    ss_set_exclusive(saved);
}

void ss_run_stopping_hooks(session *s) {
    any_cb hooks[MAX_HOOKS];
    uint32_t n = cb_snapshot(hooks, g_hooks, &g_nhooks);
    mantra_session_info info;
    info_of(s, &info);
    session *saved = ss_set_exclusive(s);
    for (uint32_t i = 0; i < n; i++)
        ((mantra_session_stopping_fn)hooks[i].fn)(hooks[i].ctx, &info);
    ss_set_exclusive(saved);
}

void ss_run_start_hooks(session *s) {
    any_cb hooks[MAX_HOOKS];
    uint32_t n = cb_snapshot(hooks, g_starts, &g_nstarts);
    mantra_session_info info;
    info_of(s, &info);
    for (uint32_t i = 0; i < n; i++) /* s->specs stay unchanged while the session lives */
        ((mantra_session_start_fn)hooks[i].fn)(hooks[i].ctx, &info, s->specs, s->nspecs);
}

int mantra_session_run_exclusive(mantra_session_id id, mantra_session_exclusive_fn fn, void *ctx) {
    if (!fn)
        return ss_set_error("NULL callback"), MANTRA_EINVAL;
    session *s = ss_acquire_running(id);
    if (!s)
        return ss_set_error("no running session with this id"), MANTRA_EINVAL;
    mantra_session_info info;
    info_of(s, &info);
    session *saved = ss_set_exclusive(s);
    fn(ctx, &info);
    ss_set_exclusive(saved);
    ss_release(s);
    return MANTRA_OK;
}

static int cb_add(any_cb *arr, uint32_t *n, void (*fn)(void), void *ctx) {
    if (!fn)
        return ss_set_error("NULL callback"), MANTRA_EINVAL;
    ss_ctl_lock();
    int rc = MANTRA_OK;
    uint32_t i = 0;
    while (i < *n && !(arr[i].fn == fn && arr[i].ctx == ctx))
        i++;
    if (i == *n) {
        if (*n == MAX_HOOKS) {
            rc = MANTRA_ERANGE;
        } else {
            arr[*n].fn = fn;
            arr[*n].ctx = ctx;
            (*n)++;
        }
    }
    ss_ctl_unlock();
    if (rc)
        ss_set_error("too many callbacks (16)");
    return rc;
}

static int cb_remove(any_cb *arr, uint32_t *n, void (*fn)(void), void *ctx) {
    ss_ctl_lock();
    int rc = MANTRA_EINVAL;
    for (uint32_t i = 0; i < *n; i++)
        if (arr[i].fn == fn && arr[i].ctx == ctx) {
            memmove(&arr[i], &arr[i + 1], (*n - i - 1) * sizeof *arr);
            (*n)--;
            rc = MANTRA_OK;
            break;
        }
    ss_ctl_unlock();
    if (rc)
        ss_set_error("callback not registered");
    return rc;
}

int mantra_session_add_stopping_hook(mantra_session_stopping_fn fn, void *ctx) {
    return cb_add(g_hooks, &g_nhooks, (void (*)(void))fn, ctx);
}
int mantra_session_remove_stopping_hook(mantra_session_stopping_fn fn, void *ctx) {
    return cb_remove(g_hooks, &g_nhooks, (void (*)(void))fn, ctx);
}
int mantra_session_add_start_hook(mantra_session_start_fn fn, void *ctx) {
    return cb_add(g_starts, &g_nstarts, (void (*)(void))fn, ctx);
}
int mantra_session_remove_start_hook(mantra_session_start_fn fn, void *ctx) {
    return cb_remove(g_starts, &g_nstarts, (void (*)(void))fn, ctx);
}
int mantra_rundown_register(mantra_rundown_fn fn, void *ctx) {
    return cb_add(g_rundowns, &g_nrundowns, (void (*)(void))fn, ctx);
}
int mantra_rundown_unregister(mantra_rundown_fn fn, void *ctx) {
    return cb_remove(g_rundowns, &g_nrundowns, (void (*)(void))fn, ctx);
}
