/* interp_events.c - the Mantra-Interp provider (manifest/dotnet.yaml; dotnet_stacks.h): the
 * reference interpreter's method enter/leave pairs and its async methods' logical calls, written by
 * the profiler layer's tracer (mantra/profiler.h, mantra_prof_trace_start) while a session enables
 * any of its events, so that a process without such a session dispatches without hooks.
 *
 *  - MethodEnter (Kind Call, Resume) and MethodLeave (Return, Suspend, Unwind): every method, the
 *    physical segments the profiler's callbacks describe, in the same order.
 *  - AsyncMethodStart/Stop/Suspend/Resume (EventSource's Start 1, Stop 2, Suspend 8, Resume 7
 *    opcodes: System.Diagnostics.Tracing.EventOpcode): ActivityId = the async call's logical call,
 *    the same on every thread that resumes it; on Start, RelatedActivityId = the awaiting caller's
 *    (its nearest async caller's, else the thread's current activity id, as EventSource's Start
 *    events relate to the activity that was current) and the stack of the call (its creator's
 *    stack, for logical stacks). MethodEnter/MethodLeave of an async method carry its ActivityId.
 * Payloads are packed here in the manifest's field order (fixed-size scalars, little-endian host),
 * as the generated writers pack them, because these events carry options (activity ids, a stack)
 * that the generated writers do not take. */
#include <stdatomic.h>
#include <string.h>

#include "dotnet_registry.h"
#include "dotnet_stacks.h"
#include "dotnet_writers.h"
#include "mantra/activity.h"
#include "mantra/profiler.h"

/* A logical call's activity id: EventSource's activity path form (mantra_activity_path_id), which
 * TraceEvent's StartStopActivityComputer follows. */
static mantra_guid activity_guid(uint64_t activity) {
    mantra_guid g;
    mantra_activity_path_id(activity, &g);
    return g;
}

static int any_enabled(void) {
    return MANTRA_Interp_MethodEnter_enabled() || MANTRA_Interp_MethodLeave_enabled() ||
           MANTRA_Interp_AsyncMethodStart_enabled() || MANTRA_Interp_AsyncMethodStop_enabled() ||
           MANTRA_Interp_AsyncMethodSuspend_enabled() || MANTRA_Interp_AsyncMethodResume_enabled();
}

/* MethodID (8), MethodToken (4) and, for enter/leave, Kind (1): the templates MethodEnterLeave and
 * AsyncMethodCall. */
static void write_event(int index, const mantra_prof_trace_event *e, int with_kind, const mantra_event_options *o) {
    uint8_t p[13];
    memcpy(p, &e->method_id, 8);
    memcpy(p + 8, &e->token, 4);
    p[12] = (uint8_t)e->kind;
    (void)mantra_event_write_bytes_ex(&mantra_Interp_events[index], &mantra_Interp_states[index], p,
                                      with_kind ? 13u : 12u, o);
}

static void write_async(int index, const mantra_prof_trace_event *e, const mantra_guid *act) {
    mantra_event_options o = {0};
    o.flags = MANTRA_EVENT_OPT_ACTIVITY;
    o.activity_id = act;
    mantra_guid rel;
    if (index == MANTRA_Interp_EVENT_AsyncMethodStart) {
        if (e->parent != 0)
            rel = activity_guid(e->parent);
        else
            mantra_activity_get(&rel);
        o.related_activity_id = &rel;
        o.stack = e->stack;
        o.stack_depth = (uint32_t)e->stack_depth;
    }
    write_event(index, e, 0, &o);
}

static void write_enter_leave(int index, const mantra_prof_trace_event *e, const mantra_guid *act) {
    mantra_event_options o = {0};
    if (act != NULL) {
        o.flags = MANTRA_EVENT_OPT_ACTIVITY;
        o.activity_id = act;
    }
    write_event(index, e, 1, act != NULL ? &o : NULL);
}

static void on_event(void *ctx, const mantra_prof_trace_event *e);

/* The tracer stays while any event is enabled; the first event after the last session stopped
 * removes it, then looks again (a session starting meanwhile installs it from its start hook after
 * publishing its masks: one of the two sees the other). */
static void retire(void) {
    mantra_prof_trace_stop(on_event, NULL);
    if (any_enabled())
        (void)mantra_prof_trace_start(on_event, NULL);
}

static void on_event(void *ctx, const mantra_prof_trace_event *e) {
    (void)ctx;
    mantra_guid act;
    if (e->activity != 0)
        act = activity_guid(e->activity);
    const mantra_guid *a = e->activity != 0 ? &act : NULL;
    int wrote = 0; /* the flags this event needs, looked at; the others only when none was set */
    switch (e->kind) {
    case MANTRA_PROF_CALL:
    case MANTRA_PROF_RESUME:
        if (a != NULL && e->kind == MANTRA_PROF_CALL && MANTRA_Interp_AsyncMethodStart_enabled())
            write_async(MANTRA_Interp_EVENT_AsyncMethodStart, e, a), wrote = 1;
        if (a != NULL && e->kind == MANTRA_PROF_RESUME && MANTRA_Interp_AsyncMethodResume_enabled())
            write_async(MANTRA_Interp_EVENT_AsyncMethodResume, e, a), wrote = 1;
        if (MANTRA_Interp_MethodEnter_enabled())
            write_enter_leave(MANTRA_Interp_EVENT_MethodEnter, e, a), wrote = 1;
        break;
    default: /* RETURN, SUSPEND, UNWIND */
        if (MANTRA_Interp_MethodLeave_enabled())
            write_enter_leave(MANTRA_Interp_EVENT_MethodLeave, e, a), wrote = 1;
        if (a != NULL && e->kind == MANTRA_PROF_SUSPEND && MANTRA_Interp_AsyncMethodSuspend_enabled())
            write_async(MANTRA_Interp_EVENT_AsyncMethodSuspend, e, a), wrote = 1;
        if (a != NULL && e->kind != MANTRA_PROF_SUSPEND && MANTRA_Interp_AsyncMethodStop_enabled())
            write_async(MANTRA_Interp_EVENT_AsyncMethodStop, e, a), wrote = 1;
        break;
    }
    if (!wrote && !any_enabled())
        retire();
}

/* A session has started and its masks are published: install the tracer if it wants any event. */
static void on_start(void *ctx, const mantra_session_info *info, const mantra_provider_spec *specs, size_t n) {
    (void)ctx;
    (void)info;
    (void)specs;
    (void)n;
    if (any_enabled())
        (void)mantra_prof_trace_start(on_event, NULL);
}

static _Atomic int g_registered;

int mantra_dotnet_interp_events_init(void) {
    int rc = mantra_dotnet_register();
    if (rc < 0)
        return rc;
    if (!atomic_exchange(&g_registered, 1) && (rc = mantra_session_add_start_hook(on_start, NULL)) < 0) {
        atomic_store(&g_registered, 0);
        return rc;
    }
    if (any_enabled()) /* sessions started before (startup tracing) */
        return mantra_prof_trace_start(on_event, NULL);
    return 0;
}

void mantra_dotnet_interp_events_fini(void) {
    if (atomic_exchange(&g_registered, 0))
        (void)mantra_session_remove_start_hook(on_start, NULL);
    mantra_prof_trace_stop(on_event, NULL);
}
