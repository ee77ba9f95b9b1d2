/* sym_map.c - the time-aware symbol map (mantra/symbols.h, docs/symbols.md). Facts are kept as they
 * come; mantra_symbols_finish() replays them in time order (unloads before loads at one tick) to
 * give every method a lifetime [from, to), then indexes every hot and cold range by address with a
 * running maximum of range ends, so that a lookup walks back only over ranges that reach the
 * address. Of the ranges holding an address at a time, the most recently loaded wins. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow-internal.h"
#include "common/hashmap-internal.h"
#include "mantra/symbols.h"

typedef struct sy_module {
    uint64_t id;
    char *path;
    int64_t load, unload; /* INT64_MIN: before the trace; INT64_MAX: never unloaded */
} sy_module;

typedef struct sy_method {
    mantra_sym_method m; /* strings owned */
    int64_t time, from, to;
    int origin;
    uint32_t module; /* index into modules, UINT32_MAX when unknown */
    uint32_t il_map; /* index into il_maps, UINT32_MAX when none */
} sy_method;

typedef struct sy_il_pair {
    uint32_t native;
    int32_t il;
} sy_il_pair;

typedef struct sy_il_map {
    sy_il_pair *pairs; /* by native offset */
    size_t count;
} sy_il_map;

typedef struct sy_unload {
    int64_t time;
    uint64_t hot_start;
} sy_unload;

typedef struct sy_range {
    uint64_t start, end, max_end; /* max_end: the largest end of this and every range before it */
    uint32_t method;
    uint8_t part;
} sy_range;

struct mantra_symbols {
    sy_module *modules;
    size_t nmodules, cap_modules;
    cm_map module_of; /* id -> index */
    sy_method *methods;
    size_t nmethods, cap_methods;
    sy_unload *unloads;
    size_t nunloads, cap_unloads;
    sy_range *ranges;
    size_t nranges;
    size_t image_merged, image_alone;
    cm_map last_of_id; /* method id -> the last fact with it + 1 */
    cm_map pending_map; /* method id -> a rundown's map waiting for its fact (map index + 1) */
    sy_il_map *il_maps;
    size_t nil_maps, cap_il_maps;
    int finished;
};

static char *dup_or_empty(const char *s) {
    if (s == NULL)
        s = "";
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

int mantra_symbols_new(mantra_symbols **out) {
    if (out == NULL)
        return MANTRA_EINVAL;
    *out = calloc(1, sizeof **out);
    return *out ? MANTRA_OK : MANTRA_ENOMEM;
}

void mantra_symbols_free(mantra_symbols *s) {
    if (s == NULL)
        return;
    for (size_t i = 0; i < s->nmodules; i++)
        free(s->modules[i].path);
    for (size_t i = 0; i < s->nmethods; i++) {
        free((char *)s->methods[i].m.name_space);
        free((char *)s->methods[i].m.name);
        free((char *)s->methods[i].m.signature);
    }
    free(s->modules);
    free(s->methods);
    free(s->unloads);
    free(s->ranges);
    for (size_t i = 0; i < s->nil_maps; i++)
        free(s->il_maps[i].pairs);
    free(s->il_maps);
    cm_map_free(&s->last_of_id);
    cm_map_free(&s->pending_map);
    cm_map_free(&s->module_of);
    free(s);
}

int mantra_symbols_module_load(mantra_symbols *s, int64_t time, int origin, uint64_t module_id, const char *il_path) {
    if (s == NULL)
        return MANTRA_EINVAL;
    if (s->finished)
        return MANTRA_ESTATE;
    int64_t load = origin == MANTRA_SYM_LOAD ? time : INT64_MIN;
    uint64_t *at = cm_map_get(&s->module_of, module_id);
    if (at) { /* known: the earliest load, the path if it had none */
        sy_module *m = &s->modules[*at];
        if (load < m->load)
            m->load = load;
        if (m->path[0] == '\0' && il_path && il_path[0]) {
            char *p = dup_or_empty(il_path);
            if (p == NULL)
                return MANTRA_ENOMEM;
            free(m->path);
            m->path = p;
        }
        return MANTRA_OK;
    }
    if (cm_grow((void **)&s->modules, &s->cap_modules, s->nmodules + 1, sizeof *s->modules, 16) != 0)
        return MANTRA_ENOMEM;
    char *p = dup_or_empty(il_path);
    if (p == NULL || cm_map_put(&s->module_of, module_id, s->nmodules) != 0) {
        free(p);
        return MANTRA_ENOMEM;
    }
    s->modules[s->nmodules++] = (sy_module){module_id, p, load, INT64_MAX};
    return MANTRA_OK;
}

int mantra_symbols_module_unload(mantra_symbols *s, int64_t time, uint64_t module_id) {
    if (s == NULL)
        return MANTRA_EINVAL;
    if (s->finished)
        return MANTRA_ESTATE;
    uint64_t *at = cm_map_get(&s->module_of, module_id);
    if (at == NULL) { /* unloaded without a load seen: loaded before the trace */
        int rc = mantra_symbols_module_load(s, time, MANTRA_SYM_START_RUNDOWN, module_id, NULL);
        if (rc != MANTRA_OK)
            return rc;
        at = cm_map_get(&s->module_of, module_id);
    }
    if (time < s->modules[*at].unload)
        s->modules[*at].unload = time;
    return MANTRA_OK;
}

int mantra_symbols_method_load(mantra_symbols *s, int64_t time, int origin, const mantra_sym_method *m) {
    if (s == NULL || m == NULL || m->hot_size == 0 || origin < MANTRA_SYM_LOAD || origin > MANTRA_SYM_IMAGE)
        return MANTRA_EINVAL;
    if (s->finished)
        return MANTRA_ESTATE;
    if (cm_grow((void **)&s->methods, &s->cap_methods, s->nmethods + 1, sizeof *s->methods, 64) != 0)
        return MANTRA_ENOMEM;
    sy_method *d = &s->methods[s->nmethods];
    memset(d, 0, sizeof *d);
    d->m = *m;
    d->m.name_space = dup_or_empty(m->name_space);
    d->m.name = dup_or_empty(m->name);
    d->m.signature = dup_or_empty(m->signature);
    if (!d->m.name_space || !d->m.name || !d->m.signature) {
        free((char *)d->m.name_space);
        free((char *)d->m.name);
        free((char *)d->m.signature);
        return MANTRA_ENOMEM;
    }
    if (m->cold_size == 0)
        d->m.cold_start = 0;
    d->time = time;
    d->origin = origin;
    d->module = UINT32_MAX;
    d->il_map = UINT32_MAX;
    uint64_t *pending = m->method_id && (origin == MANTRA_SYM_START_RUNDOWN || origin == MANTRA_SYM_END_RUNDOWN)
                            ? cm_map_get(&s->pending_map, m->method_id)
                            : NULL;
    if (pending && *pending) { /* the rundown's map written just before this fact */
        d->il_map = (uint32_t)(*pending - 1);
        *pending = 0;
    }
    if (m->method_id && origin != MANTRA_SYM_IMAGE && cm_map_put(&s->last_of_id, m->method_id, s->nmethods + 1) != 0) {
        free((char *)d->m.name_space);
        free((char *)d->m.name);
        free((char *)d->m.signature);
        return MANTRA_ENOMEM;
    }
    s->nmethods++;
    return MANTRA_OK;
}

static int cmp_il_pair(const void *pa, const void *pb) {
    const sy_il_pair *a = pa, *b = pb;
    return a->native < b->native ? -1 : a->native > b->native;
}

int mantra_symbols_il_map(mantra_symbols *s, uint64_t method_id, int rundown, const uint32_t *native,
                          const int32_t *il, size_t count) {
    if (s == NULL || (count && (native == NULL || il == NULL)))
        return MANTRA_EINVAL;
    if (s->finished)
        return MANTRA_ESTATE;
    uint64_t *last = rundown ? NULL : cm_map_get(&s->last_of_id, method_id);
    if ((!rundown && last == NULL) || count == 0 || method_id == 0)
        return MANTRA_OK;
    if (cm_grow((void **)&s->il_maps, &s->cap_il_maps, s->nil_maps + 1, sizeof *s->il_maps, 64) != 0)
        return MANTRA_ENOMEM;
    sy_il_pair *p = malloc(count * sizeof *p);
    if (p == NULL)
        return MANTRA_ENOMEM;
    for (size_t i = 0; i < count; i++)
        p[i] = (sy_il_pair){native[i], il[i]};
    qsort(p, count, sizeof *p, cmp_il_pair);
    s->il_maps[s->nil_maps] = (sy_il_map){p, count};
    if (rundown) {
        if (cm_map_put(&s->pending_map, method_id, s->nil_maps + 1) != 0)
            return MANTRA_ENOMEM; /* the map stays in the table, unused */
    } else {
        s->methods[*last - 1].il_map = (uint32_t)s->nil_maps;
    }
    s->nil_maps++;
    return MANTRA_OK;
}

int mantra_symbols_method_r2r(mantra_symbols *s, uint64_t method_id, uint64_t module_id, uint32_t token,
                              uint64_t cold_start, uint32_t cold_size) {
    if (s == NULL || method_id == 0)
        return MANTRA_EINVAL;
    if (s->finished)
        return MANTRA_ESTATE;
    uint64_t *last = cm_map_get(&s->last_of_id, method_id);
    if (last == NULL || *last == 0)
        return MANTRA_ENOENT;
    sy_method *d = &s->methods[*last - 1];
    if (d->m.module_id == 0)
        d->m.module_id = module_id;
    if (d->m.token == 0)
        d->m.token = token;
    if (cold_size != 0) {
        d->m.cold_start = cold_start;
        d->m.cold_size = cold_size;
    }
    return MANTRA_OK;
}

int mantra_symbols_method_unload(mantra_symbols *s, int64_t time, uint64_t hot_start) {
    if (s == NULL)
        return MANTRA_EINVAL;
    if (s->finished)
        return MANTRA_ESTATE;
    if (cm_grow((void **)&s->unloads, &s->cap_unloads, s->nunloads + 1, sizeof *s->unloads, 16) != 0)
        return MANTRA_ENOMEM;
    s->unloads[s->nunloads++] = (sy_unload){time, hot_start};
    return MANTRA_OK;
}

/* ---- finish ---------------------------------------------------------------------------------- */

/* A replay step: a method's load (index) or an unload (index | UNLOAD_BIT), at the time it takes
 * effect (a start rundown's method before everything). */
#define UNLOAD_BIT ((size_t)1 << (sizeof(size_t) * 8 - 1))
typedef struct step {
    int64_t time;
    size_t what;
} step;

static int cmp_step(const void *pa, const void *pb) {
    const step *a = pa, *b = pb;
    if (a->time != b->time)
        return a->time < b->time ? -1 : 1;
    int ua = (a->what & UNLOAD_BIT) != 0, ub = (b->what & UNLOAD_BIT) != 0;
    if (ua != ub) /* unloads first at one tick */
        return ua ? -1 : 1;
    return a->what < b->what ? -1 : a->what > b->what;
}

static int cmp_range(const void *pa, const void *pb) {
    const sy_range *a = pa, *b = pb;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return a->method < b->method ? -1 : a->method > b->method;
}

/* One method at one start: by module and token when it has one, else also by name. */
static int same_method(const sy_method *a, const sy_method *b) {
    if (a->m.module_id != b->m.module_id || a->m.token != b->m.token || a->m.hot_start != b->m.hot_start)
        return 0;
    return a->m.token != 0 || (strcmp(a->m.name, b->m.name) == 0 && strcmp(a->m.name_space, b->m.name_space) == 0);
}

/* The trace's methods (not the image's) sorted by module and token, for merge_image. */
typedef struct by_token {
    uint64_t module;
    uint32_t token;
    size_t method;
} by_token;

static int cmp_by_token(const void *pa, const void *pb) {
    const by_token *a = pa, *b = pb;
    if (a->module != b->module)
        return a->module < b->module ? -1 : 1;
    if (a->token != b->token)
        return a->token < b->token ? -1 : 1;
    return a->method < b->method ? -1 : a->method > b->method;
}

/* The image's methods: the trace's facts of its precompiled code (same module and token, not jitted)
 * take the image's cold part and the image's fact is dropped; the others stand for their module's
 * lifetime (from its load). */
static int merge_image(mantra_symbols *s) {
    size_t n = 0, nimage = 0;
    for (size_t i = 0; i < s->nmethods; i++)
        nimage += s->methods[i].origin == MANTRA_SYM_IMAGE;
    if (nimage == 0)
        return MANTRA_OK;
    by_token *t = malloc((s->nmethods ? s->nmethods : 1) * sizeof *t);
    if (t == NULL)
        return MANTRA_ENOMEM;
    for (size_t i = 0; i < s->nmethods; i++)
        if (s->methods[i].origin != MANTRA_SYM_IMAGE && s->methods[i].m.token != 0)
            t[n++] = (by_token){s->methods[i].m.module_id, s->methods[i].m.token, i};
    if (n > 1)
        qsort(t, n, sizeof *t, cmp_by_token);
    for (size_t i = 0; i < s->nmethods; i++) {
        sy_method *m = &s->methods[i];
        if (m->origin != MANTRA_SYM_IMAGE)
            continue;
        size_t lo = 0, hi = n; /* the first trace fact with this module and token */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (t[mid].module < m->m.module_id || (t[mid].module == m->m.module_id && t[mid].token < m->m.token))
                lo = mid + 1;
            else
                hi = mid;
        }
        int merged = 0;
        for (size_t j = lo; m->m.token && j < n && t[j].module == m->m.module_id && t[j].token == m->m.token; j++) {
            sy_method *o = &s->methods[t[j].method];
            if (o->m.flags & MANTRA_SYM_FLAG_JITTED) /* jitted code of the method: not the image's */
                continue;
            merged = 1;
            if (o->m.cold_size == 0 && m->m.cold_size) {
                o->m.cold_start = m->m.cold_start;
                o->m.cold_size = m->m.cold_size;
            }
        }
        if (merged) {
            m->origin = -1; /* dropped */
            s->image_merged++;
        } else {
            s->image_alone++;
        }
    }
    free(t);
    return MANTRA_OK;
}

int mantra_symbols_finish(mantra_symbols *s) {
    if (s == NULL)
        return MANTRA_EINVAL;
    if (s->finished)
        return MANTRA_ESTATE;
    if (merge_image(s) != MANTRA_OK)
        return MANTRA_ENOMEM;
    size_t nsteps = s->nmethods + s->nunloads;
    step *steps = malloc((nsteps ? nsteps : 1) * sizeof *steps);
    cm_map open = {0}, closed = {0}; /* hot start -> open method + 1; hot start -> last close time */
    int rc = steps ? MANTRA_OK : MANTRA_ENOMEM;
    for (size_t i = 0; rc == MANTRA_OK && i < s->nmethods; i++) {
        sy_method *m = &s->methods[i];
        uint64_t *mi = cm_map_get(&s->module_of, m->m.module_id);
        m->module = mi ? (uint32_t)*mi : UINT32_MAX;
        int64_t when = m->time;
        if (m->origin == MANTRA_SYM_START_RUNDOWN)
            when = INT64_MIN;
        else if (m->origin == MANTRA_SYM_IMAGE) /* from its module's load */
            when = m->module != UINT32_MAX ? s->modules[m->module].load : INT64_MIN;
        steps[i] = (step){when, i};
    }
    for (size_t i = 0; rc == MANTRA_OK && i < s->nunloads; i++)
        steps[s->nmethods + i] = (step){s->unloads[i].time, i | UNLOAD_BIT};
    if (rc == MANTRA_OK && nsteps > 1)
        qsort(steps, nsteps, sizeof *steps, cmp_step);
    for (size_t k = 0; rc == MANTRA_OK && k < nsteps; k++) {
        if (steps[k].what & UNLOAD_BIT) {
            const sy_unload *u = &s->unloads[steps[k].what & ~UNLOAD_BIT];
            uint64_t *o = cm_map_get(&open, u->hot_start);
            if (o && *o) {
                s->methods[*o - 1].to = u->time;
                *o = 0;
                rc = cm_map_put(&closed, u->hot_start, (uint64_t)u->time);
            }
            continue;
        }
        sy_method *m = &s->methods[steps[k].what];
        if (m->origin < 0) /* an image's method the trace knows */
            continue;
        uint64_t *o = cm_map_get(&open, m->m.hot_start);
        if (o && *o && same_method(&s->methods[*o - 1], m)) {
            m->from = m->to = 0; /* a rundown repeating what is known: dropped (its map kept) */
            m->origin = -1;
            if (s->methods[*o - 1].il_map == UINT32_MAX)
                s->methods[*o - 1].il_map = m->il_map;
            continue;
        }
        if (o && *o) /* another method at the same start: the earlier one ends here */
            s->methods[*o - 1].to = steps[k].time;
        int64_t module_load = m->module != UINT32_MAX ? s->modules[m->module].load : INT64_MIN;
        if (m->origin == MANTRA_SYM_LOAD) {
            m->from = m->time;
        } else if (m->origin == MANTRA_SYM_IMAGE) {
            m->from = steps[k].time;
        } else if (m->origin == MANTRA_SYM_START_RUNDOWN) {
            m->from = INT64_MIN;
        } else { /* end rundown: since its module's load, but after what last left this address */
            uint64_t *c = cm_map_get(&closed, m->m.hot_start);
            m->from = module_load;
            if (c && (int64_t)*c > m->from)
                m->from = (int64_t)*c;
        }
        m->to = INT64_MAX;
        if (m->module != UINT32_MAX && s->modules[m->module].unload < m->to)
            m->to = s->modules[m->module].unload;
        rc = cm_map_put(&open, m->m.hot_start, steps[k].what + 1);
    }
    /* the index: every kept method's hot and cold range */
    size_t need = 0;
    for (size_t i = 0; i < s->nmethods; i++)
        if (s->methods[i].origin >= 0)
            need += s->methods[i].m.cold_size ? 2 : 1;
    if (rc == MANTRA_OK && (s->ranges = malloc((need ? need : 1) * sizeof *s->ranges)) == NULL)
        rc = MANTRA_ENOMEM;
    if (rc == MANTRA_OK) {
        size_t n = 0;
        for (size_t i = 0; i < s->nmethods; i++) {
            const sy_method *m = &s->methods[i];
            if (m->origin < 0)
                continue;
            s->ranges[n++] = (sy_range){m->m.hot_start, m->m.hot_start + m->m.hot_size, 0, (uint32_t)i, MANTRA_SYM_HOT};
            if (m->m.cold_size)
                s->ranges[n++] = (sy_range){m->m.cold_start, m->m.cold_start + m->m.cold_size, 0, (uint32_t)i,
                                            MANTRA_SYM_COLD};
        }
        s->nranges = n;
        if (n > 1)
            qsort(s->ranges, n, sizeof *s->ranges, cmp_range);
        uint64_t max_end = 0;
        for (size_t i = 0; i < n; i++) {
            if (s->ranges[i].end > max_end)
                max_end = s->ranges[i].end;
            s->ranges[i].max_end = max_end;
        }
        s->finished = 1;
    }
    free(steps);
    cm_map_free(&open);
    cm_map_free(&closed);
    return rc;
}

int mantra_symbols_resolve(const mantra_symbols *s, uint64_t address, int64_t time, int return_address,
                           mantra_sym_result *out) {
    if (s == NULL || out == NULL)
        return MANTRA_EINVAL;
    memset(out, 0, sizeof *out);
    out->il_offset = -1;
    if (!s->finished)
        return MANTRA_ESTATE;
    uint64_t a = return_address && address > 0 ? address - 1 : address;
    /* the last range starting at or before a */
    size_t lo = 0, hi = s->nranges;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->ranges[mid].start <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    const sy_range *best = NULL;
    const sy_method *best_m = NULL;
    for (size_t i = lo; i-- > 0;) {
        const sy_range *r = &s->ranges[i];
        if (r->max_end <= a)
            break;
        if (a >= r->end)
            continue;
        const sy_method *m = &s->methods[r->method];
        if (time < m->from || time >= m->to)
            continue;
        /* the most recently loaded; at one time, the trace's fact before the image's */
        if (best_m == NULL || m->from > best_m->from ||
            (m->from == best_m->from && best_m->origin == MANTRA_SYM_IMAGE && m->origin != MANTRA_SYM_IMAGE)) {
            best = r;
            best_m = m;
        }
    }
    if (best == NULL)
        return MANTRA_OK;
    out->part = best->part;
    out->method = &best_m->m;
    out->module_id = best_m->m.module_id;
    out->module_path = best_m->module != UINT32_MAX ? s->modules[best_m->module].path : "";
    out->offset = a - best->start + (a != address ? 1 : 0);
    out->il_offset = -1;
    if (best->part == MANTRA_SYM_HOT && best_m->il_map != UINT32_MAX) {
        /* the last map entry at or before the code at a (the call itself, for a return address) */
        const sy_il_map *map = &s->il_maps[best_m->il_map];
        uint64_t native = a - best->start;
        size_t lo = 0, hi = map->count;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (map->pairs[mid].native <= native)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo > 0) {
            out->il_offset = map->pairs[lo - 1].il;
            out->il_mapped = 1;
        }
    }
    return MANTRA_OK;
}

size_t mantra_symbols_method_count(const mantra_symbols *s) { return s ? s->nmethods : 0; }

void mantra_symbols_image_counts(const mantra_symbols *s, size_t *merged, size_t *alone) {
    *merged = s ? s->image_merged : 0;
    *alone = s ? s->image_alone : 0;
}
