/* sym_samples.c - a trace's samples with their frames resolved and named (sym_samples.h). */
#include <stdlib.h>
#include <string.h>

#include "sym_logical.h"
#include "sym_samples.h"
#include "tool.h"

static int intern(sym_samples *ss, const char *name, uint32_t *out) {
    size_t i = pgo_strmap_get(&ss->index, name);
    if (i == (size_t)-1) {
        char *copy = pgo_strdup(name);
        if (copy == NULL || tool_grow((void **)&ss->names, &ss->cap_names, ss->nnames + 1, sizeof *ss->names, 256) < 0 ||
            pgo_strmap_put(&ss->index, name, ss->nnames) < 0) {
            free(copy);
            return -2;
        }
        ss->names[ss->nnames] = copy;
        i = ss->nnames++;
    }
    *out = (uint32_t)i;
    return 0;
}

static int cmp_sample(const void *pa, const void *pb) {
    const sym_sample *a = pa, *b = pb;
    if (a->thread != b->thread)
        return a->thread < b->thread ? -1 : 1;
    if (a->time != b->time)
        return a->time < b->time ? -1 : 1;
    return a->first < b->first ? -1 : a->first > b->first;
}

typedef struct reading {
    sym_samples *ss;
    int unresolved_as_address, first;
    void (*other)(void *ctx, const mantra_trace_event *ev);
    void *ctx;
    /* a method's part (or, unresolved, an address) already named: its name's index, without
     * formatting and looking the text up again (most frames are) */
    pgo_u64map known, addresses;
    sym_logical *logical; /* NULL: physical stacks only */
    uint32_t *names;      /* a Start event's frames' names (logical) */
    size_t cap_names;
} reading;

/* The names of ev's frames (resolved as frames say) into out[0..stack_count). 0 or -2. */
static int name_frames(reading *rd, const mantra_trace_event *ev, const mantra_sym_result *frames, uint32_t *out) {
    sym_samples *ss = rd->ss;
    char name[1024];
    for (size_t i = 0; i < ev->stack_count; i++) {
        const mantra_sym_result *res = &frames[i];
        uint64_t ip = mantra_trace_event_ip(ev, i);
        pgo_u64map *cache = res->part == MANTRA_SYM_NONE && rd->unresolved_as_address ? &rd->addresses : &rd->known;
        uint64_t key = res->part == MANTRA_SYM_NONE ? (rd->unresolved_as_address ? ip : 1)
                                                    : (uint64_t)(uintptr_t)res->method * 4 + (uint64_t)res->part;
        uint64_t *hit = pgo_u64map_get(cache, key);
        uint32_t id = hit ? (uint32_t)*hit : 0;
        if (hit == NULL) {
            if (res->part == MANTRA_SYM_NONE && !rd->unresolved_as_address) {
                strcpy(name, "?");
            } else {
                sym_frame_text(res, ip, 1, name, sizeof name);
                char *paren = res->part != MANTRA_SYM_NONE ? strchr(name, '(') : NULL;
                if (paren) /* no parameter list */
                    *paren = '\0';
            }
            if (intern(ss, name, &id) < 0 || pgo_u64map_put(cache, key, id) < 0)
                return -2;
        }
        out[i] = id;
    }
    return 0;
}

static int on_event(void *ctx, const mantra_trace_event *ev, const mantra_sym_result *frames) {
    reading *rd = ctx;
    sym_samples *ss = rd->ss;
    if (rd->first) {
        ss->t0 = ev->timestamp;
        rd->first = 0;
    }
    if (frames == NULL || !sym_is_sample(ev)) { /* not a sample */
        if (rd->logical != NULL) {
            /* only the events whose stacks sym_logical needs are named (their names interned) */
            size_t n = frames != NULL && sym_logical_wants(ev) ? ev->stack_count : 0;
            if ((n > 0 && (tool_grow((void **)&rd->names, &rd->cap_names, n, sizeof *rd->names, 64) < 0 ||
                           name_frames(rd, ev, frames, rd->names) < 0)) ||
                sym_logical_take(rd->logical, ev, rd->names, n) < 0)
                return -2;
        }
        if (rd->other)
            rd->other(rd->ctx, ev);
        return 0;
    }
    if (tool_grow((void **)&ss->s, &ss->cap, ss->n + 1, sizeof *ss->s, 1024) < 0 ||
        tool_grow((void **)&ss->frames, &ss->cap_frames, ss->nframes + ev->stack_count, sizeof *ss->frames, 4096) < 0)
        return -2;
    sym_sample *s = &ss->s[ss->n++];
    *s = (sym_sample){ev->thread_id, ev->timestamp, (uint32_t)ss->nframes, (uint32_t)ev->stack_count};
    if (name_frames(rd, ev, frames, ss->frames + ss->nframes) < 0)
        return -2;
    ss->nframes += ev->stack_count;
    return 0;
}

int sym_samples_read(sym_samples *ss, const sym_trace *st, int unresolved_as_address, sym_logical *logical,
                     void (*other)(void *ctx, const mantra_trace_event *ev), void *ctx) {
    memset(ss, 0, sizeof *ss); /* (other reads ss's t0 and freq: set before it is first called) */
    ss->freq = st->freq;
    reading rd = {ss, unresolved_as_address, 1, other, ctx, {0}, {0}, logical, NULL, 0};
    /* logical stacks need the AsyncMethodStart events' stacks resolved too */
    int rc = sym_trace_walk(st, logical != NULL ? sym_logical_wants : NULL, on_event, &rd);
    pgo_u64map_free(&rd.known);
    pgo_u64map_free(&rd.addresses);
    free(rd.names);
    if (rc == 0 && ss->n > 1)
        qsort(ss->s, ss->n, sizeof *ss->s, cmp_sample);
    if (rc == 0 && logical != NULL)
        rc = sym_logical_apply(logical, ss);
    return rc;
}

void sym_samples_free(sym_samples *ss) {
    for (size_t i = 0; i < ss->nnames; i++)
        free(ss->names[i]);
    free(ss->names);
    free(ss->s);
    free(ss->frames);
    pgo_strmap_free(&ss->index);
    memset(ss, 0, sizeof *ss);
}

size_t sym_samples_thread_end(const sym_samples *ss, size_t from) {
    size_t j = from;
    while (j < ss->n && ss->s[j].thread == ss->s[from].thread)
        j++;
    return j;
}

int64_t sym_sample_duration(const sym_samples *ss, size_t k, size_t from, size_t to) {
    (void)from;
    if (k + 1 < to)
        return ss->s[k + 1].time - ss->s[k].time;
    return 0;
}
