/* sym_logical.c - logical async stacks from the Mantra-Interp AsyncMethod events (sym_logical.h).
 *
 * Per thread, the running async call is the top of a stack that Start and Resume push and Suspend
 * and Stop pop, in time order. For a sample taken while call X runs: its frames from the leaf to
 * the innermost frame of X's method (X's own frame: an async method's frames above its own are its
 * callees), then X's logical callers: the frames X was called from (its Start stack without its
 * leaf), themselves rewritten the same way with X's awaiting caller (the Start's
 * RelatedActivityId), and so on up to a call that has no async caller. A sample whose frames do not
 * hold X's method (taken at the edge of a segment), or whose call's Start is not in the trace,
 * keeps its physical stack. */
#include <stdlib.h>
#include <string.h>

#include "sym_logical.h"
#include "tool.h"

#define PROVIDER "Mantra-Interp"
enum { EV_START = 3, EV_STOP = 4, EV_SUSPEND = 5, EV_RESUME = 6 }; /* manifest/dotnet.yaml */

static void guid_key(const mantra_guid *g, char out[33]) {
    static const char hex[] = "0123456789abcdef";
    uint8_t b[16];
    memcpy(b, &g->data1, 4);
    memcpy(b + 4, &g->data2, 2);
    memcpy(b + 6, &g->data3, 2);
    memcpy(b + 8, g->data4, 8);
    for (int i = 0; i < 16; i++) {
        out[2 * i] = hex[b[i] >> 4];
        out[2 * i + 1] = hex[b[i] & 15];
    }
    out[32] = '\0';
}

static int is_zero(const mantra_guid *g) {
    static const mantra_guid zero;
    return memcmp(g, &zero, sizeof zero) == 0;
}

/* The index of activity id, added when new (-1: out of memory). */
static long activity(sym_logical *lg, const mantra_guid *id) {
    char key[33];
    guid_key(id, key);
    size_t i = pgo_strmap_get(&lg->index, key);
    if (i != (size_t)-1)
        return (long)i;
    if (tool_grow((void **)&lg->acts, &lg->cap_acts, lg->nacts + 1, sizeof *lg->acts, 64) < 0 ||
        pgo_strmap_put(&lg->index, key, lg->nacts) < 0)
        return -1;
    memset(&lg->acts[lg->nacts], 0, sizeof lg->acts[0]);
    lg->acts[lg->nacts].id = *id;
    lg->acts[lg->nacts].parent = -1;
    return (long)lg->nacts++;
}

int sym_logical_wants(const mantra_trace_event *ev) {
    return ev->metadata->event_id == EV_START && strcmp(ev->metadata->provider, PROVIDER) == 0;
}

int sym_logical_take(sym_logical *lg, const mantra_trace_event *ev, const uint32_t *names, size_t n) {
    uint32_t id = ev->metadata->event_id;
    if (strcmp(ev->metadata->provider, PROVIDER) != 0 || id < EV_START || id > EV_RESUME)
        return 0;
    if (is_zero(&ev->activity_id))
        return 1;
    long a = activity(lg, &ev->activity_id);
    if (a < 0)
        return -2;
    if (id == EV_START && n > 0) {
        /* the awaiting caller's entry, added when not yet seen (its Start may come later or never) */
        long parent = is_zero(&ev->related_activity_id) ? -1 : activity(lg, &ev->related_activity_id);
        if (!is_zero(&ev->related_activity_id) && parent < 0)
            return -2;
        if (tool_grow((void **)&lg->frames, &lg->cap_frames, lg->nframes + n, sizeof *lg->frames, 1024) < 0)
            return -2;
        sym_activity *x = &lg->acts[a]; /* (after activity(): it may move acts) */
        x->started = 1;
        x->parent = parent;
        x->self = names[0];
        x->first = (uint32_t)lg->nframes;
        x->count = (uint32_t)(n - 1);
        memcpy(lg->frames + lg->nframes, names + 1, (n - 1) * sizeof *names);
        lg->nframes += n - 1;
    }
    if (tool_grow((void **)&lg->evs, &lg->cap_evs, lg->nevs + 1, sizeof *lg->evs, 256) < 0)
        return -2;
    lg->evs[lg->nevs] = (sym_act_event){ev->thread_id, ev->timestamp, lg->nevs, (uint32_t)a,
                                        id == EV_START || id == EV_RESUME};
    lg->nevs++;
    return 1;
}

static int cmp_event(const void *pa, const void *pb) {
    const sym_act_event *a = pa, *b = pb;
    if (a->thread != b->thread)
        return a->thread < b->thread ? -1 : 1;
    if (a->time != b->time)
        return a->time < b->time ? -1 : 1;
    return a->order < b->order ? -1 : a->order > b->order;
}

/* The index of the innermost frame named self in f[0..n), or n. */
static size_t innermost(const uint32_t *f, size_t n, uint32_t self) {
    size_t k = 0;
    while (k < n && f[k] != self)
        k++;
    return k;
}

static int push_below(sym_logical *lg, const uint32_t *f, size_t n) {
    if (tool_grow((void **)&lg->below, &lg->cap_below, lg->nbelow + n, sizeof *lg->below, 1024) < 0)
        return -2;
    memcpy(lg->below + lg->nbelow, f, n * sizeof *f);
    lg->nbelow += n;
    return 0;
}

/* The logical frames below activity x's own frame (its callers, awaiting ones through their
 * calls), computed once. */
static int below(sym_logical *lg, size_t x) {
    sym_activity *a = &lg->acts[x];
    if (a->state == 2)
        return 0;
    /* the parent's first (recursion depth: the chain of awaiting callers; a cycle, impossible in a
     * well-formed trace, ends it) */
    long p = -1, i = a->parent;
    if (a->state == 0 && i >= 0 && lg->acts[i].started) {
        a->state = 1;
        if (below(lg, (size_t)i) < 0)
            return -2;
        a = &lg->acts[x];
        p = lg->acts[i].state == 2 ? i : -1;
    }
    /* copy: lg->frames may not move, lg->below may (push_below grows it) */
    const uint32_t *cf = lg->frames + a->first;
    size_t n = a->count, k = p >= 0 ? innermost(cf, n, lg->acts[p].self) : n;
    size_t start = lg->nbelow;
    if (k < n) { /* the caller's frames up to its own, then its logical callers */
        sym_activity *pa = &lg->acts[p];
        if (push_below(lg, cf, k + 1) < 0)
            return -2;
        size_t pf = pa->below_first, pn = pa->below_count;
        if (tool_grow((void **)&lg->below, &lg->cap_below, lg->nbelow + pn, sizeof *lg->below, 1024) < 0)
            return -2;
        memmove(lg->below + lg->nbelow, lg->below + pf, pn * sizeof *lg->below);
        lg->nbelow += pn;
    } else if (push_below(lg, cf, n) < 0) {
        return -2;
    }
    a = &lg->acts[x];
    a->below_first = (uint32_t)start;
    a->below_count = (uint32_t)(lg->nbelow - start);
    a->state = 2;
    return 0;
}

int sym_logical_apply(sym_logical *lg, sym_samples *ss) {
    if (lg->nevs == 0)
        return 0;
    qsort(lg->evs, lg->nevs, sizeof *lg->evs, cmp_event);
    for (size_t i = 0; i < lg->nacts; i++)
        if (lg->acts[i].started && below(lg, i) < 0)
            return -2;
    uint32_t *run = NULL; /* the thread's running calls */
    size_t nrun = 0, caprun = 0;
    size_t e = 0;
    for (size_t k = 0; k < ss->n; k++) {
        sym_sample *s = &ss->s[k];
        if (k == 0 || s->thread != ss->s[k - 1].thread) {
            nrun = 0;
            while (e < lg->nevs && lg->evs[e].thread < s->thread)
                e++;
        }
        for (; e < lg->nevs && lg->evs[e].thread == s->thread && lg->evs[e].time <= s->time; e++) {
            const sym_act_event *v = &lg->evs[e];
            if (v->push) {
                if (tool_grow((void **)&run, &caprun, nrun + 1, sizeof *run, 16) < 0)
                    goto oom;
                run[nrun++] = v->activity;
            } else { /* pop it (and anything above it: a trace begun in the middle) */
                size_t j = nrun;
                while (j > 0 && run[j - 1] != v->activity)
                    j--;
                if (j > 0)
                    nrun = j - 1;
            }
        }
        const sym_activity *a = nrun > 0 ? &lg->acts[run[nrun - 1]] : NULL;
        if (a == NULL || !a->started)
            continue;
        size_t n = s->count, cut = innermost(ss->frames + s->first, n, a->self);
        if (cut == n) /* keeps its physical stack */
            continue;
        /* the logical stack, appended: frames up to the call's own, then its logical callers */
        size_t first = ss->nframes;
        if (tool_grow((void **)&ss->frames, &ss->cap_frames, first + cut + 1 + a->below_count, sizeof *ss->frames,
                      4096) < 0)
            goto oom;
        memcpy(ss->frames + first, ss->frames + s->first, (cut + 1) * sizeof *ss->frames); /* (after growing) */
        memcpy(ss->frames + first + cut + 1, lg->below + a->below_first, a->below_count * sizeof *ss->frames);
        ss->nframes = first + cut + 1 + a->below_count;
        s->first = (uint32_t)first;
        s->count = (uint32_t)(cut + 1 + a->below_count);
        lg->attributed++;
    }
    free(run);
    return 0;
oom:
    free(run);
    return -2;
}

void sym_logical_free(sym_logical *lg) {
    free(lg->acts);
    free(lg->evs);
    free(lg->frames);
    free(lg->below);
    pgo_strmap_free(&lg->index);
    memset(lg, 0, sizeof *lg);
}
