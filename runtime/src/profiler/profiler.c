/* profiler.c - the profiler callback API (mantra/profiler.h, docs/profiler.md): setting the hooks
 * the dispatch loop calls (interp/prof.c) and what a callback may ask of its info. */
#include <stdatomic.h>
#include <string.h>

#include "interp/interp-internal.h"
#include "platform/platform-internal.h"

/* The active hooks live here, one set per process; a start after a stop writes the other copy, so
 * a callback still running on the previous set reads stable data. */
static ip_prof g_sets[2];
static unsigned g_next;
static uint32_t g_gen;
static atomic_flag g_lock = ATOMIC_FLAG_INIT;

int mantra_prof_start(const mantra_prof_hooks *hooks) {
    if (hooks == NULL || hooks->enter == NULL || hooks->leave == NULL ||
        (hooks->flags & ~(MANTRA_PROF_ENABLE_ARGS | MANTRA_PROF_ENABLE_RETVAL | MANTRA_PROF_ENABLE_FRAME_INFO)) != 0)
        return MANTRA_EINVAL;
    while (atomic_flag_test_and_set_explicit(&g_lock, memory_order_acquire))
        ;
    int rc = MANTRA_OK;
    if (atomic_load(&ip_prof_active) != NULL) {
        rc = MANTRA_ESTATE;
    } else {
        ip_prof *set = &g_sets[g_next];
        g_next ^= 1u;
        set->h = *hooks;
        set->gen = ++g_gen; /* never 0: a program's fresh state (0) is nobody's answer */
        atomic_store_explicit(&ip_prof_active, set, memory_order_release);
    }
    atomic_flag_clear_explicit(&g_lock, memory_order_release);
    return rc;
}

void mantra_prof_stop(void) {
    atomic_store_explicit(&ip_prof_active, NULL, memory_order_release);
}

/* The tracer: two copies as for the hooks; a start of the same fn and ctx is a no-op. */
static ip_trace g_traces[2];
static unsigned g_next_trace;

int mantra_prof_trace_start(mantra_prof_trace_fn fn, void *ctx) {
    if (fn == NULL)
        return MANTRA_EINVAL;
    while (atomic_flag_test_and_set_explicit(&g_lock, memory_order_acquire))
        ;
    int rc = MANTRA_OK;
    const ip_trace *cur = atomic_load(&ip_trace_active);
    if (cur != NULL) {
        if (cur->fn != fn || cur->ctx != ctx)
            rc = MANTRA_ESTATE;
    } else {
        ip_trace *set = &g_traces[g_next_trace];
        g_next_trace ^= 1u;
        set->fn = fn;
        set->ctx = ctx;
        atomic_store_explicit(&ip_trace_active, set, memory_order_release);
    }
    atomic_flag_clear_explicit(&g_lock, memory_order_release);
    return rc;
}

void mantra_prof_trace_stop(mantra_prof_trace_fn fn, void *ctx) {
    while (atomic_flag_test_and_set_explicit(&g_lock, memory_order_acquire))
        ;
    const ip_trace *cur = atomic_load(&ip_trace_active);
    if (cur != NULL && cur->fn == fn && cur->ctx == ctx)
        atomic_store_explicit(&ip_trace_active, NULL, memory_order_release);
    atomic_flag_clear_explicit(&g_lock, memory_order_release);
}

int mantra_prof_enter_info(const mantra_prof_info *info, mantra_interp_value *args, size_t *count) {
    if (info == NULL || count == NULL || (info->kind != MANTRA_PROF_CALL && info->kind != MANTRA_PROF_RESUME))
        return MANTRA_EINVAL;
    if (!(info->flags & MANTRA_PROF_ENABLE_ARGS))
        return MANTRA_EFLAGS;
    if (info->kind == MANTRA_PROF_RESUME)
        return MANTRA_EDATAINCOMPLETE;
    size_t room = *count;
    *count = info->nargs;
    if (room < info->nargs || (args == NULL && info->nargs > 0))
        return MANTRA_ERANGE;
    if (info->nargs > 0)
        memcpy(args, info->args, info->nargs * sizeof *args);
    return MANTRA_OK;
}

int mantra_prof_leave_info(const mantra_prof_info *info, mantra_interp_value *retval) {
    if (info == NULL || retval == NULL || (info->kind != MANTRA_PROF_RETURN && info->kind != MANTRA_PROF_SUSPEND))
        return MANTRA_EINVAL;
    if (!(info->flags & MANTRA_PROF_ENABLE_RETVAL))
        return MANTRA_EFLAGS;
    if (info->kind == MANTRA_PROF_SUSPEND)
        return MANTRA_EDATAINCOMPLETE;
    retval->i = info->ret;
    return MANTRA_OK;
}

int mantra_prof_frame_info(const mantra_prof_info *info, mantra_prof_frame *out) {
    if (info == NULL || out == NULL)
        return MANTRA_EINVAL;
    if (!(info->flags & MANTRA_PROF_ENABLE_FRAME_INFO))
        return MANTRA_EFLAGS;
    out->program = info->program;
    out->method = info->method;
    out->depth = info->depth;
    out->os_thread_id = mantra_pal_thread_id();
    out->ip = info->ip;
    return MANTRA_OK;
}
