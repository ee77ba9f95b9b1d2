/* asm_verify.c - the assembler's last steps: branch labels (at .end), call targets (at the end of
 * the file), and the stack check of every method: each instruction has one stack depth whatever
 * path reaches it, no instruction pops more than the stack holds, `ret` leaves exactly the return
 * value, and control never runs off the end of a method. It also gives each method its deepest
 * stack (max_stack), which sizes the interpreter's frames. */
#include <stdlib.h>

#include "interp/asm-internal.h"

void ip_asm_method_free(ip_asm_method *am) {
    free(am->code);
    for (size_t i = 0; i < am->nlabels; i++)
        free(am->labels[i].name);
    free(am->labels);
    for (size_t i = 0; i < am->nbranches; i++)
        free(am->branches[i].name);
    free(am->branches);
    for (size_t i = 0; i < am->ncalls; i++)
        free(am->calls[i].name);
    free(am->calls);
    free(am->insns);
    memset(am, 0, sizeof *am);
}

int ip_asm_finish_method_labels(ip_asm_state *st, size_t mi) {
    ip_asm_method *am = &st->am[mi];
    for (size_t i = 0; i < am->nbranches; i++) {
        const ip_asm_fix *f = &am->branches[i];
        const ip_asm_label *l = NULL;
        for (size_t k = 0; k < am->nlabels; k++)
            if (strcmp(am->labels[k].name, f->name) == 0) {
                l = &am->labels[k];
                break;
            }
        if (l == NULL)
            return ip_asm_error(st, f->loc, "undefined label '%s'", f->name);
        if (l->offset >= am->len)
            return ip_asm_error(st, f->loc, "label '%s' (line %u) is at the end of the method: no instruction follows it",
                             f->name, (unsigned)l->loc.line);
        int64_t rel = (int64_t)l->offset - (int64_t)f->base;
        ip_store_i32(am->code + f->at, (int32_t)rel);
    }
    return 0;
}

int ip_asm_index_method(ip_asm_state *st, size_t mi) {
    const ip_method *m = &st->mod->methods[mi];
    uint64_t hf = ip_asm_name_hash(m->full_name), hs = ip_asm_name_hash(m->name);
    if (cm_map_get(&st->by_full, hf) == NULL && cm_map_put(&st->by_full, hf, mi + 1) != 0)
        return MANTRA_ENOMEM;
    uint64_t *s = cm_map_get(&st->by_short, hs);
    if (s == NULL) {
        if (cm_map_put(&st->by_short, hs, mi + 1) != 0)
            return MANTRA_ENOMEM;
    } else if (*s != ASM_AMBIGUOUS && strcmp(st->mod->methods[*s - 1].name, m->name) == 0) {
        *s = ASM_AMBIGUOUS;
    }
    return cm_map_put(&st->by_token, m->token, mi + 1) != 0 ? MANTRA_ENOMEM : 0;
}

/* "Ns.Name" exactly, else a unique short "Name"; -1 none, -2 ambiguous. */
static int64_t find_method(const mantra_interp_module *mod, const char *name) {
    for (size_t i = 0; i < mod->nmethods; i++)
        if (strcmp(mod->methods[i].full_name, name) == 0)
            return (int64_t)i;
    int64_t found = -1;
    for (size_t i = 0; i < mod->nmethods; i++)
        if (strcmp(mod->methods[i].name, name) == 0) {
            if (found >= 0)
                return -2;
            found = (int64_t)i;
        }
    return found;
}

int64_t ip_asm_find_method(const ip_asm_state *st, const char *name) {
    const mantra_interp_module *mod = st->mod;
    const uint64_t *f = cm_map_get(&st->by_full, ip_asm_name_hash(name));
    if (f != NULL && strcmp(mod->methods[*f - 1].full_name, name) == 0)
        return (int64_t)(*f - 1);
    const uint64_t *s = cm_map_get(&st->by_short, ip_asm_name_hash(name));
    if (f == NULL && s != NULL && *s != ASM_AMBIGUOUS && strcmp(mod->methods[*s - 1].name, name) == 0) {
        /* a unique short name, unless a full name equals it (only a scan can tell then) */
        return (int64_t)(*s - 1);
    }
    if (f == NULL && s == NULL)
        return -1;
    return find_method(mod, name); /* a collision, an ambiguous short name: the scan decides */
}

int64_t mantra_interp_module_find(const mantra_interp_module *m, const char *name) {
    if (m == NULL || name == NULL)
        return -1;
    int64_t i = find_method(m, name);
    return i < 0 ? -1 : i;
}

/* Index of the instruction at offset, or -1. */
static int64_t insn_at(const ip_asm_method *am, uint32_t offset) {
    size_t lo = 0, hi = am->ninsns;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (am->insns[mid].offset < offset)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < am->ninsns && am->insns[lo].offset == offset ? (int64_t)lo : -1;
}

static int verify(ip_asm_state *st, size_t mi) {
    ip_asm_method *am = &st->am[mi];
    ip_method *m = &st->mod->methods[mi];
    const mantra_interp_module *mod = st->mod;
    int64_t *depth = malloc(am->ninsns * sizeof *depth);
    size_t *work = malloc(am->ninsns * sizeof *work);
    if (depth == NULL || work == NULL) {
        free(depth);
        free(work);
        return ip_asm_nomem(st);
    }
    for (size_t i = 0; i < am->ninsns; i++)
        depth[i] = -1;
    size_t nwork = 0;
    depth[0] = 0;
    work[nwork++] = 0;
    int64_t max = 0;
    int rc = 0;
    while (rc == 0 && nwork > 0) {
        size_t ii = work[--nwork];
        const ip_asm_insn *in = &am->insns[ii];
        const uint8_t *c = am->code + in->offset;
        uint32_t size = ip_insn_size(c, (uint32_t)(am->len - in->offset));
        const ip_opinfo *info = &ip_opinfo_table[c[0]];
        int64_t d = depth[ii], pops = info->pops, pushes = info->pushes;
        if (c[0] == IP_OP_CALL) {
            const ip_method *callee = &mod->methods[ip_load_u32(c + 1)];
            pops = callee->nargs;
            pushes = callee->is_async || callee->ret_type != IP_TYPE_VOID; /* async: its task */
        } else if ((c[0] == IP_OP_AWAIT || c[0] == IP_OP_YIELD || c[0] == IP_OP_DELAY) && !m->is_async) {
            rc = ip_asm_error(st, in->loc, "'%s' outside an async method (declare it `.method %s async %s(...)`)",
                              info->name, m->full_name, m->ret_type == IP_TYPE_VOID ? "void" : m->ret_type == IP_TYPE_F64 ? "double" : "int64");
            break;
        } else if (c[0] == IP_OP_RET) {
            int64_t want = m->ret_type != IP_TYPE_VOID;
            if (d != want) {
                rc = ip_asm_error(st, in->loc, "ret with %lld value%s on the stack; method '%s' returns %s (needs %lld)",
                               (long long)d, d == 1 ? "" : "s", m->full_name,
                               m->ret_type == IP_TYPE_VOID ? "void" : "a value", (long long)want);
                break;
            }
            continue;
        }
        if (d < pops) {
            rc = ip_asm_error(st, in->loc, "stack underflow: '%s' needs %lld value%s, the stack holds %lld", info->name,
                           (long long)pops, pops == 1 ? "" : "s", (long long)d);
            break;
        }
        int64_t nd = d - pops + pushes;
        if (nd > max)
            max = nd;
        /* successors: branch targets, then the next instruction unless the flow stops here */
        uint32_t next = in->offset + size;
        uint32_t targets[2] = {0, 0};
        size_t ntargets = 0;
        int falls = 1;
        if (info->operand == IP_OPND_BR) {
            targets[ntargets++] = (uint32_t)((int64_t)next + ip_load_i32(c + 1));
            falls = c[0] != IP_OP_BR;
        }
        for (size_t k = 0; rc == 0 && k < ntargets + (info->operand == IP_OPND_SWITCH ? ip_load_u32(c + 1) : 0) + 1;
             k++) {
            uint32_t t;
            int is_fall = 0;
            if (info->operand == IP_OPND_SWITCH && k < ip_load_u32(c + 1))
                t = (uint32_t)((int64_t)next + ip_load_i32(c + 5 + 4 * k));
            else if (info->operand != IP_OPND_SWITCH && k < ntargets)
                t = targets[k];
            else if (falls) {
                t = next;
                is_fall = 1;
            } else {
                break;
            }
            if (is_fall && t >= am->len) {
                rc = ip_asm_error(st, in->loc, "control reaches the end of method '%s' without ret", m->full_name);
                break;
            }
            int64_t ti = insn_at(am, t);
            if (ti < 0) { /* labels always sit on instructions; cannot happen */
                rc = ip_asm_error(st, in->loc, "branch target IL_%04x is not an instruction", (unsigned)t);
                break;
            }
            if (depth[ti] < 0) {
                depth[ti] = nd;
                work[nwork++] = (size_t)ti;
            } else if (depth[ti] != nd) {
                rc = ip_asm_error(st, is_fall ? am->insns[ti].loc : in->loc,
                               "stack depth mismatch at IL_%04x: %lld value%s on this path, %lld on another",
                               (unsigned)t, (long long)nd, nd == 1 ? "" : "s", (long long)depth[ti]);
            }
        }
    }
    free(depth);
    free(work);
    if (rc == 0) {
        if (max > 0x7fffffff)
            return ip_asm_error(st, am->loc, "method stack too deep");
        m->max_stack = (uint32_t)max;
    }
    return rc;
}

int ip_asm_finish_module(ip_asm_state *st) {
    mantra_interp_module *mod = st->mod;
    for (size_t mi = 0; mi < mod->nmethods; mi++) {
        ip_asm_method *am = &st->am[mi];
        for (size_t i = 0; i < am->ncalls; i++) {
            const ip_asm_fix *f = &am->calls[i];
            int64_t k = ip_asm_find_method(st, f->name);
            if (k == -1)
                return ip_asm_error(st, f->loc, "undefined method '%s'", f->name);
            if (k == -2)
                return ip_asm_error(st, f->loc, "ambiguous method name '%s' (qualify it with its namespace)", f->name);
            ip_store_u32(am->code + f->at, (uint32_t)k);
        }
        int rc = verify(st, mi);
        if (rc != 0)
            return rc;
        ip_method *m = &mod->methods[mi];
        m->il = am->code;
        m->il_size = (uint32_t)am->len;
        am->code = NULL;
    }
    return 0;
}
