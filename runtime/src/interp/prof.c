/* prof.c - calling the profiler's enter/leave/unwind hooks from the dispatch loop (mantra/profiler.h;
 * the API that sets them: src/profiler). Hooks are found through one atomic pointer; each program
 * keeps, per method, the mapper's answer for the current hooks. */
#include <stdlib.h>

#include "interp/interp-internal.h"

_Atomic(const ip_prof *) ip_prof_active;

int ip_prof_program_init(mantra_interp_program *p) {
    size_t n = p->nmethods ? p->nmethods : 1;
    p->prof_state = calloc(n, sizeof *p->prof_state);
    p->prof_client = calloc(n, sizeof *p->prof_client);
    return p->prof_state && p->prof_client ? 0 : MANTRA_ENOMEM;
}

void ip_prof_event(const mantra_interp_program *p, const ip_lmethod *m, int kind, const void *args, int64_t ret,
                   uint32_t depth, const uint8_t *ip) {
    const ip_prof *hk = atomic_load_explicit(&ip_prof_active, memory_order_acquire);
    if (hk == NULL || p->prof_state == NULL)
        return;
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
