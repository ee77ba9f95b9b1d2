/* load.c - loading a module for execution: probe placement (MANTRA_InterpPgo modes 1 and 2, the
 * MANTRA_InterpPgoMethods filter), the rewrite that inserts probe instructions and re-targets
 * branches, the code region, counters from the allocator, and IP -> (method, IL offset). */
#include <stdlib.h>

#include "interp/async-internal.h"
#include "platform/platform-internal.h"

void mantra_interp_load_options_init(mantra_interp_load_options *o) {
    if (o == NULL)
        return;
    memset(o, 0, sizeof *o);
    o->pgo_mode = -1;
    o->counting = MANTRA_INTERP_COUNT_DEFAULT;
}

static uint32_t *default_alloc(void *ctx, const mantra_interp_method_identity *id, const uint32_t *il_offsets,
                               uint32_t count) {
    (void)ctx;
    (void)id;
    (void)il_offsets;
    return calloc(count, sizeof(uint32_t));
}

static void default_release(void *ctx, const mantra_interp_method_identity *id, uint32_t *counters,
                            uint32_t count) {
    (void)ctx;
    (void)id;
    (void)count;
    free(counters);
}

static const mantra_interp_counter_allocator g_private_allocator = {default_alloc, default_release, NULL};

const mantra_interp_counter_allocator *mantra_interp_private_counters(void) {
    return &g_private_allocator;
}

/* Marks the probe points of one method in mark[il_size]; returns their number. Mode 1: IL offset 0
 * and every target of a backward branch (target <= the branch's own offset, switch targets
 * included); mode 2: every basic block: offset 0, every branch or switch target, and every
 * instruction after a branch, switch or ret. */
static uint32_t place_probes(const ip_method *m, int mode, uint8_t *mark) {
    memset(mark, 0, m->il_size);
    mark[0] = 1;
    for (uint32_t o = 0; o < m->il_size;) {
        const uint8_t *c = m->il + o;
        uint32_t size = ip_insn_size(c, m->il_size - o);
        uint32_t next = o + size;
        const ip_opinfo *info = &ip_opinfo_table[c[0]];
        uint32_t n = 0;
        const uint8_t *rel = NULL;
        if (info->operand == IP_OPND_BR) {
            n = 1;
            rel = c + 1;
        } else if (info->operand == IP_OPND_SWITCH) {
            n = ip_load_u32(c + 1);
            rel = c + 5;
        }
        for (uint32_t k = 0; k < n; k++) {
            uint32_t t = (uint32_t)((int64_t)next + ip_load_i32(rel + 4 * k));
            if (mode == 2 || t <= o)
                mark[t] = 1;
        }
        if (mode == 2 && (n > 0 || c[0] == IP_OP_RET) && next < m->il_size)
            mark[next] = 1;
        o = next;
    }
    uint32_t count = 0;
    for (uint32_t o = 0; o < m->il_size; o++)
        count += mark[o];
    return count;
}

void ip_lmethod_init(ip_lmethod *lm, const ip_method *x, uint32_t index) {
    lm->src = x;
    lm->index = index;
    lm->nargs = x->nargs;
    lm->nlocals = x->nlocals;
    lm->max_stack = x->max_stack;
    lm->returns = x->ret_type != IP_TYPE_VOID;
    lm->is_async = x->is_async;
    atomic_init(&lm->call_flags, (uint8_t)(x->is_async ? IP_CALL_ASYNC : 0));
}

uint32_t ip_block_starts(const ip_method *m, uint8_t *mark) {
    return place_probes(m, 2, mark);
}

static int method_selected(const ip_method *m, const char *filter) {
    if (filter == NULL || filter[0] == '\0')
        return 1;
    return mantra_interp_glob_match(filter, m->full_name) || mantra_interp_glob_match(filter, m->name);
}

void mantra_interp_program_free(mantra_interp_program *p) {
    if (p == NULL)
        return;
    ip_registry_remove_program(p);
    if (p->sched != NULL) {
        ip_sched_fini(p->sched);
        free(p->sched);
    }
    for (size_t i = 0; i < p->nmethods; i++) {
        ip_lmethod *lm = &p->methods[i];
        if (lm->counters != NULL && lm->pgo == NULL && p->allocator.release != NULL) {
            mantra_interp_method_identity id;
            mantra_interp_module_method(p->module, i, &id);
            p->allocator.release(p->allocator.ctx, &id, lm->counters, lm->nprobes);
        }
        free(lm->code_to_il);
        free(lm->probe_il);
        free(lm->pgo_slots);
    }
    free(p->methods);
    free(p->code);
    free(p->probe_counter);
    free(p->ranges);
    free((void *)p->prof_state);
    free((void *)p->prof_client);
    free(p);
}

static int env_mode(int *mode) {
    /* three spellings, not a number: "00" or "01" is refused */
    const char *v = mantra_pal_getenv_set("MANTRA_InterpPgo");
    if (v == NULL) {
        *mode = 0;
        return 0;
    }
    if (v[1] == '\0' && v[0] >= '0' && v[0] <= '2') {
        *mode = v[0] - '0';
        return 0;
    }
    return MANTRA_EINVAL;
}

#define IP_NO_PROBE UINT32_MAX

/* 1 when the instruction at c is a branch (not switch) whose target has a probe: the loader turns
 * it into a counting branch (4 bytes longer). */
static int counting_branch(const uint8_t *c, uint32_t o, uint32_t size, const uint32_t *probe_at) {
    if (ip_opinfo_table[c[0]].operand != IP_OPND_BR)
        return 0;
    uint32_t t = (uint32_t)((int64_t)o + size + ip_load_i32(c + 1));
    return probe_at[t] != IP_NO_PROBE;
}

/* Bytes of method m's code with probes (probe_at[o]: probe index at IL offset o, or IP_NO_PROBE). */
static uint32_t rewritten_size(const ip_method *m, const uint32_t *probe_at) {
    uint32_t w = 0;
    for (uint32_t o = 0; o < m->il_size;) {
        uint32_t size = ip_insn_size(m->il + o, m->il_size - o);
        w += size + (probe_at[o] != IP_NO_PROBE ? 5u : 0u) + (counting_branch(m->il + o, o, size, probe_at) ? 4u : 0u);
        o += size;
    }
    return w;
}

/* Copies method m's IL into dst with a probe instruction before every probed instruction. Branches
 * to a probed instruction become counting branches (they bump the target's counter and land past
 * its probe); switch targets land on the probe. new_of_il[o]: where IL offset o (its probe, if
 * any) starts in the new code. */
static void rewrite(const ip_method *m, const uint32_t *probe_at, int atomic, uint8_t *dst, uint32_t *code_to_il,
                    uint32_t *new_of_il) {
    uint32_t w = 0;
    for (uint32_t o = 0; o < m->il_size;) {
        uint32_t size = ip_insn_size(m->il + o, m->il_size - o);
        new_of_il[o] = w;
        w += size + (probe_at[o] != IP_NO_PROBE ? 5u : 0u) + (counting_branch(m->il + o, o, size, probe_at) ? 4u : 0u);
        o += size;
    }
    for (uint32_t o = 0; o < m->il_size;) {
        const uint8_t *c = m->il + o;
        uint32_t size = ip_insn_size(c, m->il_size - o);
        uint32_t at = new_of_il[o], next = o + size;
        if (probe_at[o] != IP_NO_PROBE) {
            dst[at] = atomic ? IP_OP_PROBE_A : IP_OP_PROBE;
            ip_store_u32(dst + at + 1, probe_at[o]);
            at += 5;
        }
        const ip_opinfo *info = &ip_opinfo_table[c[0]];
        uint32_t len = size;
        if (counting_branch(c, o, size, probe_at)) {
            uint32_t t = (uint32_t)((int64_t)next + ip_load_i32(c + 1));
            len = 9;
            dst[at] = (uint8_t)((atomic ? IP_OP_BR_PA : IP_OP_BR_P) + (c[0] - IP_OP_BR));
            ip_store_i32(dst + at + 1, (int32_t)((int64_t)new_of_il[t] + 5 - (int64_t)(at + 9)));
            ip_store_u32(dst + at + 5, probe_at[t]);
        } else {
            memcpy(dst + at, c, size);
            if (info->operand == IP_OPND_BR) {
                uint32_t t = (uint32_t)((int64_t)next + ip_load_i32(c + 1));
                ip_store_i32(dst + at + 1, (int32_t)((int64_t)new_of_il[t] - (int64_t)(at + size)));
            } else if (info->operand == IP_OPND_SWITCH) {
                uint32_t n = ip_load_u32(c + 1);
                for (uint32_t k = 0; k < n; k++) {
                    uint32_t t = (uint32_t)((int64_t)next + ip_load_i32(c + 5 + 4 * k));
                    ip_store_i32(dst + at + 5 + 4 * k, (int32_t)((int64_t)new_of_il[t] - (int64_t)(at + size)));
                }
            }
        }
        for (uint32_t k = new_of_il[o]; k < at + len; k++)
            code_to_il[k] = o;
        o = next;
    }
}

int mantra_interp_load(const mantra_interp_module *m, const mantra_interp_load_options *o,
                       mantra_interp_program **out) {
    if (m == NULL || out == NULL || m->precompiled) /* an image's module runs from its image */
        return MANTRA_EINVAL;
    *out = NULL;
    mantra_interp_load_options def;
    if (o == NULL) {
        mantra_interp_load_options_init(&def);
        o = &def;
    }
    int mode = o->pgo_mode;
    if (mode < 0) {
        if (env_mode(&mode) != 0)
            return MANTRA_EINVAL;
    } else if (mode > 2) {
        return MANTRA_EINVAL;
    }
    if (o->counting > MANTRA_INTERP_COUNT_PER_THREAD)
        return MANTRA_EINVAL;
    const char *filter = o->pgo_methods ? o->pgo_methods : mantra_pal_getenv("MANTRA_InterpPgoMethods");
    uint32_t counting = o->counting;
    if (counting == MANTRA_INTERP_COUNT_DEFAULT) {
#ifdef MANTRA_THREADLESS
        counting = MANTRA_INTERP_COUNT_PLAIN;
#else
        counting = MANTRA_INTERP_COUNT_PER_THREAD;
#endif
    }

    mantra_interp_program *p = calloc(1, sizeof *p);
    if (p == NULL)
        return MANTRA_ENOMEM;
    p->module = m;
    p->pgo_mode = mode;
    p->counting = counting;
    p->pgo_store = o->allocator == NULL;
    if (o->allocator != NULL)
        p->allocator = *o->allocator;
    p->methods = calloc(m->nmethods ? m->nmethods : 1, sizeof *p->methods);
    p->sched = ip_sched_new();
    uint32_t max_il = 0;
    for (size_t i = 0; i < m->nmethods; i++)
        if (m->methods[i].il_size > max_il)
            max_il = m->methods[i].il_size;
    uint8_t *mark = malloc((size_t)max_il + 1);
    uint32_t *new_of_il = malloc(((size_t)max_il + 1) * sizeof *new_of_il);
    uint32_t *probe_at = malloc(((size_t)max_il + 1) * sizeof *probe_at);
    int rc = 0;
    if (p->methods == NULL || p->sched == NULL || mark == NULL || new_of_il == NULL || probe_at == NULL)
        rc = MANTRA_ENOMEM;
    p->nmethods = p->methods ? m->nmethods : 0; /* what mantra_interp_program_free walks */
    if (rc == 0)
        rc = ip_prof_program_init(p);

    /* pass 1: probe points, sizes */
    size_t total = 0;
    for (size_t i = 0; rc == 0 && i < m->nmethods; i++) {
        const ip_method *x = &m->methods[i];
        ip_lmethod *lm = &p->methods[i];
        ip_lmethod_init(lm, x, (uint32_t)i);
        lm->code_size = x->il_size;
        if (mode != 0 && method_selected(x, filter)) {
            lm->nprobes = place_probes(x, mode, mark);
            lm->probe_il = malloc(lm->nprobes * sizeof *lm->probe_il);
            if (lm->probe_il == NULL) {
                rc = MANTRA_ENOMEM;
                break;
            }
            uint32_t k = 0;
            for (uint32_t off = 0; off < x->il_size; off++) {
                probe_at[off] = mark[off] ? k : IP_NO_PROBE; /* indexes within the method, for sizes */
                if (mark[off])
                    lm->probe_il[k++] = off;
            }
            lm->code_size = rewritten_size(x, probe_at);
            if ((uint64_t)p->nprobes + lm->nprobes > UINT32_MAX) {
                rc = MANTRA_ERANGE;
                break;
            }
            p->nprobes += lm->nprobes;
        }
        total += lm->code_size;
    }
    if (rc == 0) {
        p->code = malloc(total ? total : 1);
        p->code_size = total;
        p->probe_counter = calloc(p->nprobes ? p->nprobes : 1, sizeof *p->probe_counter);
        if (p->code == NULL || p->probe_counter == NULL)
            rc = MANTRA_ENOMEM;
    }
    /* pass 2: counters, code */
    size_t at = 0;
    uint32_t first_probe = 0;
    for (size_t i = 0; rc == 0 && i < m->nmethods; i++) {
        const ip_method *x = &m->methods[i];
        ip_lmethod *lm = &p->methods[i];
        uint8_t *dst = p->code + at;
        lm->code = dst;
        if (lm->nprobes == 0) {
            memcpy(dst, x->il, x->il_size);
        } else {
            if (p->pgo_store) {
                rc = ip_store_counters(m, lm);
                if (rc != 0)
                    break;
            } else {
                mantra_interp_method_identity id;
                mantra_interp_module_method(m, i, &id);
                lm->counters = p->allocator.alloc(p->allocator.ctx, &id, lm->probe_il, lm->nprobes);
            }
            lm->code_to_il = malloc((size_t)lm->code_size * sizeof *lm->code_to_il);
            if (lm->counters == NULL || lm->code_to_il == NULL) {
                rc = MANTRA_ENOMEM;
                break;
            }
            for (uint32_t off = 0; off < x->il_size; off++)
                probe_at[off] = IP_NO_PROBE;
            for (uint32_t k = 0; k < lm->nprobes; k++) {
                probe_at[lm->probe_il[k]] = first_probe + k;
                p->probe_counter[first_probe + k] = &lm->counters[k];
            }
            rewrite(x, probe_at, counting == MANTRA_INTERP_COUNT_ATOMIC, dst, lm->code_to_il, new_of_il);
            /* PER_THREAD uses the plain instructions on the thread's own counters */
            first_probe += lm->nprobes;
        }
        at += lm->code_size;
    }
    free(mark);
    free(new_of_il);
    free(probe_at);
    if (rc != 0) {
        mantra_interp_program_free(p);
        return rc;
    }
    ip_registry_add_program(p);
    *out = p;
    return 0;
}

const mantra_interp_module *mantra_interp_program_module(const mantra_interp_program *p) {
    return p ? p->module : NULL;
}

uint32_t mantra_interp_program_counting(const mantra_interp_program *p) {
    return p ? p->counting : 0;
}

int mantra_interp_program_pgo_mode(const mantra_interp_program *p) {
    return p ? p->pgo_mode : 0;
}

int mantra_interp_program_probes(const mantra_interp_program *p, size_t method, mantra_interp_probes *out) {
    if (p == NULL || out == NULL || method >= p->nmethods)
        return MANTRA_EINVAL;
    const ip_lmethod *lm = &p->methods[method];
    out->count = lm->nprobes;
    out->il_offsets = lm->probe_il;
    out->counters = lm->counters;
    return 0;
}

int mantra_interp_program_code(const mantra_interp_program *p, size_t method, const uint8_t **code, size_t *size) {
    if (p == NULL || method >= p->nmethods)
        return MANTRA_EINVAL;
    if (code)
        *code = p->methods[method].code;
    if (size)
        *size = p->methods[method].code_size;
    return 0;
}

int mantra_interp_program_locate(const mantra_interp_program *p, const void *ip, size_t *method,
                                 uint32_t *il_offset) {
    if (p == NULL || ip == NULL || p->nmethods == 0)
        return MANTRA_EINVAL;
    if (p->ranges != NULL)
        return ip_locate_precompiled(p, (uintptr_t)ip, method, il_offset, NULL);
    uintptr_t a = (uintptr_t)ip, base = (uintptr_t)p->code;
    if (a < base || a >= base + p->code_size)
        return MANTRA_EINVAL;
    /* methods are laid out in index order: binary search on their start addresses */
    size_t lo = 0, hi = p->nmethods;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if ((uintptr_t)p->methods[mid].code <= a)
            lo = mid;
        else
            hi = mid;
    }
    const ip_lmethod *lm = &p->methods[lo];
    uint32_t off = (uint32_t)(a - (uintptr_t)lm->code);
    if (method)
        *method = lo;
    if (il_offset)
        *il_offset = lm->code_to_il ? lm->code_to_il[off] : off;
    return 0;
}
