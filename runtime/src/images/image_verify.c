/* image_verify.c - the instructions of one method of an image, before anything runs: each part
 * decodes into whole instructions of the assembler's opcodes (no loader-only ones), ends in br or
 * ret (execution never runs off a part), every branch lands on an instruction of one of the
 * method's two parts, every operand is in range (arguments, locals, methods, literals), and the
 * stack depth of each instruction is the same on every path, never below what it pops, never above
 * the record's max_stack, exactly the return value at ret. The method's IL map is checked against
 * its instructions. What passes cannot make the dispatch loop read or write outside the image or
 * the thread's frame. */
#include <stdlib.h>

#include "images/image-format.h"

typedef struct vm_method {
    const im_layout *l;
    uint32_t index;
    uint64_t record_at;
    uint32_t hot, hsz, cold, csz; /* rvas and sizes */
    uint32_t nargs, nslots, max_stack, returns, is_async;
    uint8_t *start; /* per virtual offset: 1 at an instruction's first byte */
} vm_method;

/* The rva of virtual offset v (the entry part's bytes, then the cold part's). */
static uint32_t rva_of(const vm_method *m, uint32_t v) {
    return v < m->hsz ? m->hot + v : m->cold + (v - m->hsz);
}

/* The virtual offset of rva t, or -1 when it is in neither part. */
static int64_t virt_of(const vm_method *m, int64_t t) {
    if (t >= m->hot && t < (int64_t)m->hot + m->hsz)
        return t - m->hot;
    if (m->csz && t >= m->cold && t < (int64_t)m->cold + m->csz)
        return m->hsz + (t - m->cold);
    return -1;
}

/* Decodes the part [v0, v0 + size) of the virtual space: instruction starts, opcodes, the last
 * instruction. */
static int decode_part(vm_method *m, uint32_t v0, uint32_t size, mantra_image_error *err) {
    const uint8_t *b = m->l->bytes;
    uint8_t last = 0;
    for (uint32_t v = v0; v < v0 + size;) {
        uint32_t rva = rva_of(m, v);
        const uint8_t *c = b + rva;
        uint32_t n = ip_insn_size(c, v0 + size - v);
        if (n == 0 || c[0] >= IP_OP_FIRST_LOADER_ONLY)
            return im_fail(err, rva, "method %u: %s at rva %u", m->index,
                           n == 0 && c[0] < IP_OP_COUNT_ ? "an instruction cut by the end of its part" : "an unknown opcode",
                           rva);
        m->start[v] = 1;
        last = c[0];
        v += n;
    }
    if (last != IP_OP_BR && last != IP_OP_RET)
        return im_fail(err, rva_of(m, v0), "method %u: its %s part does not end in br or ret (execution would run off it)",
                       m->index, v0 == 0 ? "entry" : "cold");
    return 0;
}

/* The virtual target of the branch operand at rel (relative to the instruction's end). */
static int branch_target(const vm_method *m, uint32_t v, uint32_t n, int32_t rel, uint32_t *out,
                         mantra_image_error *err) {
    int64_t t = (int64_t)rva_of(m, v) + n + rel;
    int64_t tv = virt_of(m, t);
    if (tv < 0 || !m->start[tv])
        return im_fail(err, rva_of(m, v), "method %u: branch to rva %lld, %s", m->index, (long long)t,
                       tv < 0 ? "outside the method's parts" : "not on an instruction");
    *out = (uint32_t)tv;
    return 0;
}

static int operands(const vm_method *m, const uint8_t *c, uint32_t rva, mantra_image_error *err) {
    const ip_opinfo *info = &ip_opinfo_table[c[0]];
    if (info->operand == IP_OPND_U16) {
        uint32_t k = ip_load_u16(c + 1);
        uint32_t limit = (c[0] == IP_OP_LDARG || c[0] == IP_OP_STARG) ? m->nargs : m->nslots;
        if (k >= limit)
            return im_fail(err, rva, "method %u: %s %u out of range (%u)", m->index, info->name, k, limit);
    } else if (c[0] == IP_OP_CALL && ip_load_u32(c + 1) >= m->l->nmethods) {
        return im_fail(err, rva, "method %u: call to method %u of %u", m->index, ip_load_u32(c + 1), m->l->nmethods);
    } else if (c[0] == IP_OP_PRINT_S && ip_load_u32(c + 1) >= m->l->nliterals) {
        return im_fail(err, rva, "method %u: literal %u of %u", m->index, ip_load_u32(c + 1), m->l->nliterals);
    }
    return 0;
}

/* Stack depths over the control flow, from the entry at depth 0. */
static int depths(vm_method *m, mantra_image_error *err) {
    uint32_t total = m->hsz + m->csz;
    int32_t *depth = malloc((size_t)total * sizeof *depth);
    uint32_t *work = malloc((size_t)total * sizeof *work);
    if (depth == NULL || work == NULL) {
        free(depth);
        free(work);
        return MANTRA_ENOMEM;
    }
    for (uint32_t v = 0; v < total; v++)
        depth[v] = -1;
    size_t nwork = 0;
    depth[0] = 0;
    work[nwork++] = 0;
    int rc = 0;
    const uint8_t *b = m->l->bytes;
    while (rc == 0 && nwork > 0) {
        uint32_t v = work[--nwork];
        uint32_t rva = rva_of(m, v);
        const uint8_t *c = b + rva;
        uint32_t part_end = v < m->hsz ? m->hsz : total;
        uint32_t n = ip_insn_size(c, part_end - v);
        const ip_opinfo *info = &ip_opinfo_table[c[0]];
        int64_t d = depth[v], pops = info->pops, pushes = info->pushes;
        if ((rc = operands(m, c, rva, err)) != 0)
            break;
        if (c[0] == IP_OP_CALL) {
            const uint8_t *callee = im_method_record(m->l, ip_load_u32(c + 1));
            pops = callee[IM_M_NARGS];
            pushes = callee[IM_M_RET_TYPE] != IP_TYPE_VOID || (mantra_load_u32(callee + IM_M_FLAGS) & MANTRA_IMAGE_ASYNC);
        } else if ((c[0] == IP_OP_AWAIT || c[0] == IP_OP_YIELD || c[0] == IP_OP_DELAY) && !m->is_async) {
            rc = im_fail(err, rva, "method %u: '%s' in a method that is not async", m->index, info->name);
            break;
        } else if (c[0] == IP_OP_RET) {
            if (d != (int64_t)m->returns)
                rc = im_fail(err, rva, "method %u: ret with %lld values on the stack (needs %u)", m->index, (long long)d,
                             m->returns);
            continue;
        }
        if (d < pops) {
            rc = im_fail(err, rva, "method %u: stack underflow at rva %u (%s needs %lld, the stack holds %lld)", m->index,
                         rva, info->name, (long long)pops, (long long)d);
            break;
        }
        int64_t nd = d - pops + pushes;
        if (nd > (int64_t)m->max_stack) {
            rc = im_fail(err, m->record_at + IM_M_MAX_STACK, "method %u: the stack reaches %lld at rva %u, above its "
                         "max_stack %u", m->index, (long long)nd, rva, m->max_stack);
            break;
        }
        uint32_t nsw = info->operand == IP_OPND_SWITCH ? ip_load_u32(c + 1) : 0;
        for (uint32_t k = 0; rc == 0 && k <= nsw; k++) {
            uint32_t t = 0;
            if (info->operand == IP_OPND_SWITCH && k < nsw)
                rc = branch_target(m, v, n, ip_load_i32(c + 5 + 4 * (size_t)k), &t, err);
            else if (info->operand == IP_OPND_BR && k == 0)
                rc = branch_target(m, v, n, ip_load_i32(c + 1), &t, err);
            else
                continue;
            if (rc == 0 && (depth[t] < 0 || depth[t] != nd)) {
                if (depth[t] >= 0) {
                    rc = im_fail(err, rva, "method %u: stack depth %lld on one path to rva %u, %d on another", m->index,
                                 (long long)nd, rva_of(m, t), depth[t]);
                } else {
                    depth[t] = (int32_t)nd;
                    work[nwork++] = t;
                }
            }
        }
        /* the next instruction, unless the flow stops here (parts end in br or ret) */
        if (rc == 0 && c[0] != IP_OP_BR && v + n < part_end) {
            uint32_t t = v + n;
            if (depth[t] < 0) {
                depth[t] = (int32_t)nd;
                work[nwork++] = t;
            } else if (depth[t] != nd) {
                rc = im_fail(err, rva_of(m, t), "method %u: stack depth %lld on one path to rva %u, %d on another",
                             m->index, (long long)nd, rva_of(m, t), depth[t]);
            }
        }
    }
    free(depth);
    free(work);
    return rc;
}

static int check_map(const vm_method *m, const uint8_t *r, mantra_image_error *err) {
    const im_layout *l = m->l;
    uint32_t first = mantra_load_u32(r + IM_M_MAP_FIRST), count = mantra_load_u32(r + IM_M_MAP_COUNT);
    uint32_t il_size = mantra_load_u32(r + IM_M_IL_SIZE), total = m->hsz + m->csz;
    const uint8_t *e = l->bytes + l->sec[IM_SEC_ILMAP].offset + (size_t)first * IM_MAP_SIZE;
    for (uint32_t k = 0; k < count; k++, e += IM_MAP_SIZE) {
        uint32_t code = mantra_load_u32(e), il = mantra_load_u32(e + 4);
        uint64_t at = (uint64_t)(e - l->bytes);
        if ((k == 0 && code != 0) || (k > 0 && code <= mantra_load_u32(e - IM_MAP_SIZE)) || code >= total ||
            !m->start[code])
            return im_fail(err, at, "method %u: IL map entry %u (code offset %u) is not the next instruction start", m->index,
                           k, code);
        if (il >= il_size)
            return im_fail(err, at + 4, "method %u: IL map entry %u has IL offset %u beyond the method's %u IL bytes",
                           m->index, k, il, il_size);
    }
    return 0;
}

int im_verify_method(const im_layout *l, uint32_t i, mantra_image_error *err) {
    const uint8_t *r = im_method_record(l, i);
    vm_method m = {0};
    m.l = l;
    m.index = i;
    m.record_at = (uint64_t)l->sec[IM_SEC_METHODS].offset + (uint64_t)i * IM_METHOD_SIZE;
    m.hot = mantra_load_u32(r + IM_M_HOT_RVA);
    m.hsz = mantra_load_u32(r + IM_M_HOT_SIZE);
    m.cold = mantra_load_u32(r + IM_M_COLD_RVA);
    m.csz = mantra_load_u32(r + IM_M_COLD_SIZE);
    m.nargs = r[IM_M_NARGS];
    m.nslots = m.nargs + mantra_load_u16(r + IM_M_NLOCALS);
    m.max_stack = mantra_load_u32(r + IM_M_MAX_STACK);
    m.returns = r[IM_M_RET_TYPE] != IP_TYPE_VOID;
    m.is_async = (mantra_load_u32(r + IM_M_FLAGS) & MANTRA_IMAGE_ASYNC) != 0;
    m.start = calloc((size_t)m.hsz + m.csz, 1);
    if (m.start == NULL)
        return MANTRA_ENOMEM;
    int rc = decode_part(&m, 0, m.hsz, err);
    if (rc == 0 && m.csz)
        rc = decode_part(&m, m.hsz, m.csz, err);
    if (rc == 0)
        rc = depths(&m, err);
    if (rc == 0)
        rc = check_map(&m, r, err);
    free(m.start);
    return rc;
}
