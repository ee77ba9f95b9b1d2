/* prof.c - calling the profiler's enter/leave/unwind hooks and the tracer's from the dispatch loop
 * (mantra/profiler.h; the API that sets them: src/profiler). Hooks are found through one atomic
 * pointer each; each program keeps, per method, the mapper's answer for the current hooks. */
#include <stdlib.h>

#include "interp/async-internal.h"

_Atomic(const ip_prof *) ip_prof_active;
_Atomic(const ip_trace *) ip_trace_active;

int ip_prof_program_init(mantra_interp_program *p) {
    size_t n = p->nmethods ? p->nmethods : 1;
    p->prof_state = calloc(n, sizeof *p->prof_state);
    p->prof_client = calloc(n, sizeof *p->prof_client);
    return p->prof_state && p->prof_client ? 0 : MANTRA_ENOMEM;
}

static void profiler_event(const ip_prof *hk, const mantra_interp_program *p, const ip_lmethod *m, int kind,
                           const void *args, int64_t ret, uint32_t depth, const uint8_t *ip) {
    size_t i = m->index;
    uint32_t st = atomic_load_explicit(&p->prof_state[i], memory_order_acquire);
    uintptr_t client;
    if ((st >> 1) != hk->gen) { /* first time under these hooks: ask the mapper */
        int hook = 1;
        client = hk->h.mapper ? hk->h.mapper(hk->h.mapper_ctx, p, i, &hook) : (uintptr_t)i;
        atomic_store_explicit(&p->prof_client[i], client, memory_order_relaxed);
        st = (hk->gen << 1) | (hook ? 1u : 0u);
        atomic_store_explicit(&p->prof_state[i], st, memory_order_release);
    } else {
        client = atomic_load_explicit(&p->prof_client[i], memory_order_relaxed);
    }
    if (!(st & 1u))
        return;
    mantra_prof_info info = {p, i, kind, hk->h.flags, args, m->nargs, ret, depth, ip};
    if (kind == MANTRA_PROF_CALL || kind == MANTRA_PROF_RESUME)
        hk->h.enter(client, kind, &info);
    else if (kind == MANTRA_PROF_UNWIND) {
        if (hk->h.unwind)
            hk->h.unwind(client, &info);
    } else
        hk->h.leave(client, kind, &info);
}

/* The logical call of the nearest async frame below depth on t (0: none). */
static uint64_t parent_activity(const mantra_interp_thread *t, uint32_t depth) {
    while (depth-- > 0)
        if (t->frames[depth].task != 0)
            return ip_task_activity(t->prog->sched, t->frames[depth].task);
    return 0;
}

static void tracer_event(const ip_trace *tr, mantra_interp_thread *t, const ip_lmethod *m, int kind, uint32_t depth,
                         uint64_t task) {
    mantra_prof_trace_event e = {0};
    uint64_t stack[MANTRA_INTERP_SAMPLE_FRAMES];
    e.kind = kind;
    e.program = t->prog;
    e.method = m->index;
    e.method_id = (uint64_t)(uintptr_t)m->code;
    e.token = m->src->token;
    e.depth = depth;
    e.is_async = m->is_async;
    if (task != 0) {
        e.activity = ip_task_activity(t->prog->sched, task);
        if (kind == MANTRA_PROF_CALL) {
            e.parent = parent_activity(t, depth);
            /* the thread's own published stack: only it writes it, so plain reads are exact */
            size_t n = 0;
            for (uint32_t d = depth + 1; d-- > 0 && n < MANTRA_INTERP_SAMPLE_FRAMES;)
                stack[n++] = atomic_load_explicit(&t->pub.ips[d], memory_order_relaxed);
            e.stack = stack;
            e.stack_depth = n;
        }
    }
    tr->fn(tr->ctx, &e);
}

void ip_prof_event(const ip_run_hooks *rh, mantra_interp_thread *t, const ip_lmethod *m, int kind, const void *args,
                   int64_t ret, uint32_t depth, const uint8_t *ip, uint64_t task) {
    const ip_prof *hk = rh->prof;
    const ip_trace *tr = rh->trace;
    if (hk != NULL && hk != atomic_load_explicit(&ip_prof_active, memory_order_acquire))
        hk = NULL; /* stopped (or stopped and started again) since the run began */
    if (tr != NULL && tr != atomic_load_explicit(&ip_trace_active, memory_order_acquire))
        tr = NULL;
    /* Enter: the tracer first (its Start and Resume open what the profiler's callbacks nest in);
     * Leave and Unwind: the profiler first */
    int enter = kind == MANTRA_PROF_CALL || kind == MANTRA_PROF_RESUME;
    if (tr != NULL && enter)
        tracer_event(tr, t, m, kind, depth, task);
    if (hk != NULL && t->prog->prof_state != NULL)
        profiler_event(hk, t->prog, m, kind, args, ret, depth, ip);
    if (tr != NULL && !enter)
        tracer_event(tr, t, m, kind, depth, task);
}
