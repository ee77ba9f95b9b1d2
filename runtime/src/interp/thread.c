/* thread.c - interpreter threads: creating the stacks, running an entry method, errors. */
#include <stdio.h>
#include <stdlib.h>

#include "interp/async-internal.h"
#include "platform/platform-internal.h"

void mantra_interp_thread_options_init(mantra_interp_thread_options *o) {
    if (o != NULL)
        memset(o, 0, sizeof *o);
}

/* PER_THREAD with the PGO store: the probes count in this thread's cells of the store (its
 * mantra_pgo_thread, every page they need allocated now), so the dispatch loop is the same as
 * with private per-thread counters and a snapshot sees the counts while the thread runs. */
static int store_cells(mantra_interp_thread *t) {
    const mantra_interp_program *p = t->prog;
    t->pgo = mantra_pgo_thread_attach();
    if (t->pgo == NULL)
        return MANTRA_ENOMEM;
    uint32_t k = 0;
    for (size_t i = 0; i < p->nmethods; i++) {
        const ip_lmethod *lm = &p->methods[i];
        for (uint32_t j = 0; j < lm->nprobes; j++, k++) {
            uint32_t slot = lm->pgo_slots[j];
            uint32_t *cells = mantra_pgo_thread_page(t->pgo, slot >> MANTRA_PGO_PAGE_SHIFT);
            if (cells == NULL)
                return MANTRA_ENOMEM;
            t->local_table[k] = &cells[slot & (MANTRA_PGO_PAGE_SLOTS - 1u)];
        }
    }
    return 0;
}

int mantra_interp_thread_create(const mantra_interp_program *p, const mantra_interp_thread_options *o,
                                mantra_interp_thread **out) {
    if (p == NULL || out == NULL)
        return MANTRA_EINVAL;
    *out = NULL;
    mantra_interp_thread *t = calloc(1, sizeof *t);
    if (t == NULL)
        return MANTRA_ENOMEM;
    t->prog = p;
    if (o != NULL)
        t->opts = *o;
    t->stack_slots = t->opts.stack_slots ? t->opts.stack_slots : (1u << 20);
    t->max_frames = t->opts.max_frames ? t->opts.max_frames : 100000u;
    t->stack = malloc((size_t)t->stack_slots * sizeof *t->stack);
    t->frames = malloc((size_t)t->max_frames * sizeof *t->frames);
    t->pub.ips = calloc((size_t)t->max_frames + 1u, sizeof *t->pub.ips);
    atomic_init(&t->pub.depth, -1);
    int nomem = t->stack == NULL || t->frames == NULL || t->pub.ips == NULL;
    if (p->counting == MANTRA_INTERP_COUNT_PER_THREAD && p->nprobes > 0) {
        t->local_table = malloc(p->nprobes * sizeof *t->local_table);
        nomem |= t->local_table == NULL;
        if (!nomem && p->pgo_store)
            nomem |= store_cells(t) != 0;
        else if (!nomem) {
            t->local_counts = calloc(p->nprobes, sizeof *t->local_counts);
            nomem |= t->local_counts == NULL;
            for (uint32_t k = 0; !nomem && k < p->nprobes; k++)
                t->local_table[k] = &t->local_counts[k];
        }
    }
    if (nomem) {
        mantra_interp_thread_free(t);
        return MANTRA_ENOMEM;
    }
    ip_registry_add_thread(t);
    *out = t;
    return 0;
}

void mantra_interp_thread_flush(mantra_interp_thread *t) {
    if (t == NULL || t->local_counts == NULL)
        return;
    const mantra_interp_program *p = t->prog;
    for (uint32_t k = 0; k < p->nprobes; k++) {
        uint32_t n = t->local_counts[k];
        if (n == 0)
            continue;
#if defined(__GNUC__) || defined(__clang__)
        __atomic_fetch_add(p->probe_counter[k], n, __ATOMIC_RELAXED);
#else
        *p->probe_counter[k] += n;
#endif
        t->local_counts[k] = 0;
    }
}

void mantra_interp_thread_free(mantra_interp_thread *t) {
    if (t == NULL)
        return;
    ip_registry_remove_thread(t); /* a no-op for a thread whose create failed */
    mantra_interp_thread_flush(t);
    if (t->pgo != NULL)
        mantra_pgo_thread_detach(t->pgo);
    free(t->local_counts);
    free(t->local_table);
    free(t->stack);
    free(t->frames);
    free((void *)t->pub.ips);
    free(t);
}

const char *mantra_interp_thread_last_error(const mantra_interp_thread *t) {
    return t ? t->err : "";
}

int mantra_interp_thread_run(mantra_interp_thread *t, const char *entry, const mantra_interp_value *args,
                             size_t nargs, mantra_interp_value *result) {
    if (t == NULL || entry == NULL || (args == NULL && nargs > 0))
        return MANTRA_EINVAL;
    t->err[0] = '\0';
    const mantra_interp_program *p = t->prog;
    int64_t mi = mantra_interp_module_find(p->module, entry);
    if (mi < 0) {
        snprintf(t->err, sizeof t->err, "no method '%s'", entry);
        return MANTRA_EINVAL;
    }
    const ip_lmethod *m = &p->methods[mi];
    if (nargs != m->nargs) {
        snprintf(t->err, sizeof t->err, "method '%s' takes %u argument%s, %zu given", m->src->full_name,
                 (unsigned)m->nargs, m->nargs == 1 ? "" : "s", nargs);
        return MANTRA_EINVAL;
    }
    if (nargs > t->stack_slots) {
        snprintf(t->err, sizeof t->err, "stack overflow");
        return MANTRA_ESTATE;
    }
    if ((size_t)t->stack_slots - nargs < (size_t)m->nlocals + m->max_stack) {
        snprintf(t->err, sizeof t->err, "%s+IL_0000: stack overflow", m->src->full_name);
        return MANTRA_ESTATE;
    }
    for (size_t i = 0; i < nargs; i++)
        memcpy(&t->stack[i], &args[i], sizeof args[i]);
    for (size_t i = 0; i < m->nlocals; i++)
        t->stack[nargs + i].i = 0;
    if (result != NULL)
        memset(result, 0, sizeof *result);
    /* the entry is frame 0 of the published stack until the run returns */
    atomic_store_explicit(&t->pub.os_tid, mantra_pal_thread_id(), memory_order_relaxed);
    ip_pub_begin(&t->pub);
    atomic_store_explicit(&t->pub.ips[0], (uintptr_t)m->code, memory_order_release);
    atomic_store_explicit(&t->pub.depth, 0, memory_order_release);
    ip_pub_end(&t->pub);
    if (atomic_load_explicit(&m->call_flags, memory_order_relaxed) & IP_CALL_FIRST)
        ip_first_call(p, m);
    ip_count_call(t); /* the entry run is a call too */
    ip_start st = {m, m->code, t->stack, t->stack + nargs + m->nlocals, 0, 0, 0};
    atomic_fetch_add(&p->sched->running, 1);
    int rc = 0;
    if (m->is_async && (st.task = ip_task_new(p->sched)) == 0) {
        snprintf(t->err, sizeof t->err, "out of memory (a task)");
        rc = MANTRA_ESTATE;
    }
    mantra_interp_value r = {0};
    if (rc == 0)
        rc = ip_execute(t, &st, &r);
    if (rc == 0 && m->is_async) { /* an async entry: its task, run to completion here */
        ip_value v = {0};
        const char *why = NULL;
        rc = ip_wait_task(t, (uint64_t)r.i, t->stack, 0, &v, &why);
        if (why != NULL)
            snprintf(t->err, sizeof t->err, "%s: %s", m->src->full_name, why);
        r.i = v.i;
    }
    atomic_fetch_sub(&p->sched->running, 1);
    if (result != NULL)
        *result = r;
    ip_pub_depth(&t->pub, -1);
    ip_out_flush(t);
    mantra_interp_thread_flush(t);
    return rc;
}

int mantra_interp_thread_pump(mantra_interp_thread *t, uint32_t max, uint32_t timeout_ms) {
    if (t == NULL)
        return MANTRA_EINVAL;
    t->err[0] = '\0';
    ip_sched *s = t->prog->sched;
    atomic_store_explicit(&t->pub.os_tid, mantra_pal_thread_id(), memory_order_relaxed);
    atomic_fetch_add(&s->running, 1);
    uint64_t deadline = mantra_pal_monotonic_ns() + (uint64_t)timeout_ms * 1000000u;
    int rc = 0;
    uint32_t n = 0;
    while (n < max) {
        uint64_t wait_ns = 0;
        ip_cont *c = ip_sched_next(s, &wait_ns);
        if (c != NULL) {
            if ((rc = ip_run_cont(t, c, t->stack, 0)) != 0)
                break;
            n++;
            continue;
        }
        uint64_t now = mantra_pal_monotonic_ns();
        if (now >= deadline)
            break;
        ip_sched_sleep(s, wait_ns < deadline - now ? wait_ns : deadline - now, 0);
    }
    atomic_fetch_sub(&s->running, 1);
    ip_pub_depth(&t->pub, -1);
    ip_out_flush(t);
    mantra_interp_thread_flush(t);
    return rc != 0 ? rc : (int)n;
}
