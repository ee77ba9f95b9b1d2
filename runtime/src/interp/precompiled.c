/* precompiled.c - programs over precompiled code (images, src/images): methods whose code is an
 * entry part and a split-off cold part inside an image mapped read-only, executed in place; the
 * IP -> (method, IL offset) lookup over both parts; the first-call hook (the per-method load step). */
#include <stdlib.h>

#include "interp/async-internal.h"

static int range_cmp(const void *a, const void *b) {
    const ip_range *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

int ip_load_precompiled(const mantra_interp_module *m, const ip_precompiled_method *pm,
                        void (*first_call)(void *ctx, const mantra_interp_program *p, size_t method), void *ctx,
                        mantra_interp_program **out) {
    if (m == NULL || !m->precompiled || out == NULL || (pm == NULL && m->nmethods > 0))
        return MANTRA_EINVAL;
    *out = NULL;
    mantra_interp_program *p = calloc(1, sizeof *p);
    if (p == NULL)
        return MANTRA_ENOMEM;
    p->module = m;
    p->counting = MANTRA_INTERP_COUNT_PLAIN;
    p->allocator = *mantra_interp_private_counters();
    p->methods = calloc(m->nmethods ? m->nmethods : 1, sizeof *p->methods);
    p->ranges = calloc(m->nmethods ? 2 * m->nmethods : 1, sizeof *p->ranges);
    p->sched = ip_sched_new();
    p->nmethods = p->methods ? m->nmethods : 0; /* what mantra_interp_program_free walks */
    if (p->methods == NULL || p->ranges == NULL || p->sched == NULL || ip_prof_program_init(p) != 0) {
        mantra_interp_program_free(p);
        return MANTRA_ENOMEM;
    }
    p->first_call = first_call;
    p->first_call_ctx = ctx;
    for (size_t i = 0; i < m->nmethods; i++) {
        const ip_method *x = &m->methods[i];
        ip_lmethod *lm = &p->methods[i];
        ip_lmethod_init(lm, x, (uint32_t)i);
        lm->code = pm[i].code;
        lm->code_size = pm[i].code_size;
        lm->cold_code = pm[i].cold;
        lm->cold_size = pm[i].cold_size;
        lm->map = pm[i].map;
        lm->nmap = pm[i].nmap;
        if (first_call != NULL)
            atomic_fetch_or_explicit(&lm->call_flags, (uint8_t)IP_CALL_FIRST, memory_order_relaxed);
        p->ranges[p->nranges++] = (ip_range){(uintptr_t)lm->code, (uintptr_t)lm->code + lm->code_size, (uint32_t)i, 0};
        if (lm->cold_size > 0)
            p->ranges[p->nranges++] =
                (ip_range){(uintptr_t)lm->cold_code, (uintptr_t)lm->cold_code + lm->cold_size, (uint32_t)i, 1};
    }
    qsort(p->ranges, p->nranges, sizeof *p->ranges, range_cmp);
    ip_registry_add_program(p);
    *out = p;
    return 0;
}

int ip_locate_precompiled(const mantra_interp_program *p, uintptr_t a, size_t *method, uint32_t *il_offset, int *cold) {
    size_t lo = 0, hi = p->nranges;
    while (lo < hi) { /* the last range starting at or before a */
        size_t mid = lo + (hi - lo) / 2;
        if (p->ranges[mid].start <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || a >= p->ranges[lo - 1].end)
        return MANTRA_EINVAL;
    const ip_range *r = &p->ranges[lo - 1];
    const ip_lmethod *lm = &p->methods[r->method];
    uint32_t off = (uint32_t)(a - r->start) + (r->cold ? lm->code_size : 0u);
    /* the last map entry at or before off: its IL offset (an instruction's bytes map to its start) */
    uint32_t il = 0;
    size_t l = 0, h = lm->nmap;
    while (l < h) {
        size_t mid = l + (h - l) / 2;
        if (ip_load_u32(lm->map + 8 * mid) <= off)
            l = mid + 1;
        else
            h = mid;
    }
    if (l > 0)
        il = ip_load_u32(lm->map + 8 * (l - 1) + 4);
    if (method)
        *method = r->method;
    if (il_offset)
        *il_offset = il;
    if (cold)
        *cold = r->cold;
    return 0;
}

void ip_first_call(const mantra_interp_program *p, const ip_lmethod *m) {
    /* the flag lives in the program's heap array, never in read-only memory */
    ip_lmethod *w = (ip_lmethod *)(uintptr_t)m;
    if ((atomic_fetch_and_explicit(&w->call_flags, (uint8_t)~IP_CALL_FIRST, memory_order_acq_rel) & IP_CALL_FIRST) &&
        p->first_call != NULL)
        p->first_call(p->first_call_ctx, p, m->index);
}
