/* image_build.c - precompiling an assembled module into an image laid out from a profile
 * (mantra/image.h, docs/image-format.md): each method's basic blocks split into a hot part (the
 * blocks that ran, in IL order, entry first) and a cold part (the rest, in IL order); a block whose
 * fall-through successor does not follow it in its part gets a `br` to it; every branch re-targeted
 * to where its target block landed, across the parts when it must. Hot parts go in decreasing
 * weight, as crossgen2's --method-layout orders hot code, so what runs is dense. */
#include <stdlib.h>

#include "common/grow-internal.h"
#include "images/image-format.h"

typedef struct buf {
    uint8_t *p;
    size_t len, cap;
} buf;

static int buf_put(buf *b, const void *data, size_t n) {
    if (cm_grow((void **)&b->p, &b->cap, b->len + n, 1, 256) != 0)
        return MANTRA_ENOMEM;
    if (n)
        memcpy(b->p + b->len, data, n);
    b->len += n;
    return 0;
}

static int buf_u32(buf *b, uint32_t v) {
    uint8_t x[4];
    cm_store_u32(x, v);
    return buf_put(b, x, 4);
}

/* A branch operand to resolve once every part has its place. */
typedef struct reloc {
    uint8_t part;
    uint32_t at, base; /* operand and instruction end, offsets in the part */
    uint32_t target_il;
} reloc;

/* A map entry before the parts' sizes are known. */
typedef struct pmap {
    uint8_t part;
    uint32_t off, il;
} pmap;

typedef struct mbuild {
    buf part[2];        /* [0] the entry part, [1] the split-off cold part */
    reloc *rel;
    size_t nrel, caprel;
    pmap *map;
    size_t nmap, capmap;
    uint8_t *at_part;   /* per IL offset: the part a block starting there landed in */
    uint32_t *at_off;   /* ... and its offset there */
    int placed_cold;
    uint32_t rva[2];
} mbuild;

static int add_rel(mbuild *mb, uint8_t part, uint32_t at, uint32_t base, uint32_t target) {
    if (cm_grow((void **)&mb->rel, &mb->caprel, mb->nrel + 1, sizeof *mb->rel, 16) != 0)
        return MANTRA_ENOMEM;
    mb->rel[mb->nrel++] = (reloc){part, at, base, target};
    return 0;
}

static int add_map(mbuild *mb, uint8_t part, uint32_t off, uint32_t il) {
    if (cm_grow((void **)&mb->map, &mb->capmap, mb->nmap + 1, sizeof *mb->map, 32) != 0)
        return MANTRA_ENOMEM;
    mb->map[mb->nmap++] = (pmap){part, off, il};
    return 0;
}

/* Emits blocks blk[0..n) (their [start, end) IL ranges, in order) into part p. */
static int emit_part(const ip_method *x, mbuild *mb, uint8_t p, const uint32_t (*blk)[2], size_t n) {
    buf *b = &mb->part[p];
    int rc = 0;
    for (size_t k = 0; rc == 0 && k < n; k++) {
        uint32_t s = blk[k][0], e = blk[k][1], last = s;
        mb->at_part[s] = p;
        mb->at_off[s] = (uint32_t)b->len;
        for (uint32_t o = s; rc == 0 && o < e;) {
            const uint8_t *c = x->il + o;
            uint32_t size = ip_insn_size(c, x->il_size - o);
            uint32_t here = (uint32_t)b->len, next = o + size;
            const ip_opinfo *info = &ip_opinfo_table[c[0]];
            rc = add_map(mb, p, here, o);
            if (rc == 0 && info->operand == IP_OPND_BR)
                rc = add_rel(mb, p, here + 1, here + size, (uint32_t)((int64_t)next + ip_load_i32(c + 1)));
            for (uint32_t j = 0; rc == 0 && info->operand == IP_OPND_SWITCH && j < ip_load_u32(c + 1); j++)
                rc = add_rel(mb, p, here + 5 + 4 * j, here + size,
                             (uint32_t)((int64_t)next + ip_load_i32(c + 5 + 4 * (size_t)j)));
            if (rc == 0)
                rc = buf_put(b, c, size);
            last = o;
            o = next;
        }
        uint8_t op = x->il[last];
        int falls = op != IP_OP_BR && op != IP_OP_RET;
        if (rc == 0 && falls && (k + 1 == n || blk[k + 1][0] != e)) {
            /* the fall-through successor lives elsewhere: branch to it */
            static const uint8_t br[5] = {IP_OP_BR, 0, 0, 0, 0};
            uint32_t here = (uint32_t)b->len;
            rc = add_map(mb, p, here, last);
            if (rc == 0)
                rc = add_rel(mb, p, here + 1, here + 5, e);
            if (rc == 0)
                rc = buf_put(b, br, sizeof br);
        }
    }
    return rc;
}

/* Splits method x by its layout into mb's parts. */
static int split_method(const ip_method *x, const mantra_image_layout *lay, mbuild *mb) {
    uint8_t *mark = malloc((size_t)x->il_size + 1);
    uint32_t(*blk)[2] = malloc(((size_t)x->il_size + 1) * sizeof *blk);
    uint32_t(*hot)[2] = malloc(((size_t)x->il_size + 1) * sizeof *hot);
    uint32_t(*cold)[2] = malloc(((size_t)x->il_size + 1) * sizeof *cold);
    mb->at_part = calloc((size_t)x->il_size + 1, 1);
    mb->at_off = calloc((size_t)x->il_size + 1, sizeof *mb->at_off);
    int rc = mark && blk && hot && cold && mb->at_part && mb->at_off ? 0 : MANTRA_ENOMEM;
    if (rc == 0) {
        uint32_t nb = ip_block_starts(x, mark), k = 0;
        for (uint32_t o = 0; o < x->il_size; o++)
            if (mark[o]) {
                if (k > 0)
                    blk[k - 1][1] = o;
                blk[k++][0] = o;
            }
        blk[nb - 1][1] = x->il_size;
        size_t nh = 0, nc = 0;
        for (uint32_t b = 0; b < nb; b++) {
            int is_hot = lay->block_hot ? lay->block_hot[b] != 0 : lay->whole_hot != 0;
            if (is_hot) {
                hot[nh][0] = blk[b][0];
                hot[nh++][1] = blk[b][1];
            }
        }
        if (nh == 0) { /* nothing ran: the whole method, unsplit, in the cold section */
            mb->placed_cold = 1;
            rc = emit_part(x, mb, 0, (const uint32_t(*)[2])blk, nb);
        } else {
            nh = 0;
            for (uint32_t b = 0; b < nb; b++) {
                /* the entry block stays with the entry part */
                int is_hot = b == 0 || (lay->block_hot ? lay->block_hot[b] != 0 : lay->whole_hot != 0);
                uint32_t(*dst)[2] = is_hot ? hot : cold;
                size_t *nd = is_hot ? &nh : &nc;
                dst[*nd][0] = blk[b][0];
                dst[(*nd)++][1] = blk[b][1];
            }
            rc = emit_part(x, mb, 0, (const uint32_t(*)[2])hot, nh);
            if (rc == 0)
                rc = emit_part(x, mb, 1, (const uint32_t(*)[2])cold, nc);
        }
    }
    free(mark);
    free(blk);
    free(hot);
    free(cold);
    return rc;
}

/* Resolves mb's branches now that both parts have their rvas. */
static void resolve(mbuild *mb) {
    for (size_t k = 0; k < mb->nrel; k++) {
        const reloc *r = &mb->rel[k];
        int64_t target = (int64_t)mb->rva[mb->at_part[r->target_il]] + mb->at_off[r->target_il];
        int64_t end = (int64_t)mb->rva[r->part] + r->base;
        ip_store_i32(mb->part[r->part].p + r->at, (int32_t)(target - end));
    }
}

typedef struct ranked {
    uint64_t weight;
    size_t index;
} ranked;

static int by_weight(const void *a, const void *b) {
    const ranked *x = a, *y = b;
    if (x->weight != y->weight)
        return x->weight > y->weight ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static size_t align_up(size_t v, size_t a) {
    return (v + a - 1) / a * a;
}

/* Adds s (NUL-terminated) to the heap; its offset in *off. */
static int heap_str(buf *h, const char *s, uint32_t *off) {
    *off = (uint32_t)h->len;
    return buf_put(h, s, strlen(s) + 1);
}

static int write_image(const mantra_interp_module *m, mbuild *mbs, size_t hot_size, size_t cold_size, buf *out) {
    buf heap = {0}, meth = {0}, lit = {0}, map = {0};
    uint32_t name_off = 0;
    int rc = buf_put(&heap, "", 1);
    if (rc == 0)
        rc = heap_str(&heap, m->name, &name_off);
    uint32_t map_first = 0;
    for (size_t i = 0; rc == 0 && i < m->nmethods; i++) {
        const ip_method *x = &m->methods[i];
        mbuild *mb = &mbs[i];
        uint32_t ns = 0, nm = 0, sg = 0, types = (uint32_t)heap.len;
        rc = buf_put(&heap, x->arg_types, x->nargs);
        if (rc == 0)
            rc = heap_str(&heap, x->namespace_name, &ns);
        if (rc == 0)
            rc = heap_str(&heap, x->name, &nm);
        if (rc == 0)
            rc = heap_str(&heap, x->signature, &sg);
        uint8_t r[IM_METHOD_SIZE] = {0};
        cm_store_u32(r + IM_M_TOKEN, x->token);
        cm_store_u32(r + IM_M_NAMESPACE, ns);
        cm_store_u32(r + IM_M_NAME, nm);
        cm_store_u32(r + IM_M_SIGNATURE, sg);
        r[IM_M_RET_TYPE] = x->ret_type;
        r[IM_M_NARGS] = (uint8_t)x->nargs;
        cm_store_u16(r + IM_M_NLOCALS, x->nlocals);
        cm_store_u32(r + IM_M_ARG_TYPES, types);
        cm_store_u32(r + IM_M_MAX_STACK, x->max_stack);
        cm_store_u32(r + IM_M_IL_SIZE, x->il_size);
        cm_store_u32(r + IM_M_HOT_SIZE, (uint32_t)mb->part[0].len); /* rvas: once the sections are placed */
        cm_store_u32(r + IM_M_COLD_SIZE, (uint32_t)mb->part[1].len);
        cm_store_u32(r + IM_M_MAP_FIRST, map_first);
        cm_store_u32(r + IM_M_MAP_COUNT, (uint32_t)mb->nmap);
        cm_store_u32(r + IM_M_FLAGS, (mb->placed_cold ? MANTRA_IMAGE_PLACED_COLD : 0u) | (x->is_async ? MANTRA_IMAGE_ASYNC : 0u));
        if (rc == 0)
            rc = buf_put(&meth, r, sizeof r);
        /* entry part first, then the cold part: virtual offsets in that order */
        for (int p = 0; p < 2 && rc == 0; p++)
            for (size_t k = 0; k < mb->nmap && rc == 0; k++)
                if (mb->map[k].part == p) {
                    rc = buf_u32(&map, mb->map[k].off + (p ? (uint32_t)mb->part[0].len : 0u));
                    if (rc == 0)
                        rc = buf_u32(&map, mb->map[k].il);
                }
        map_first += (uint32_t)mb->nmap;
    }
    for (size_t k = 0; rc == 0 && k < m->nstrings; k++) {
        uint32_t off = (uint32_t)heap.len;
        rc = buf_put(&heap, m->strings[k], m->string_lens[k]);
        if (rc == 0)
            rc = buf_u32(&lit, off);
        if (rc == 0)
            rc = buf_u32(&lit, m->string_lens[k]);
    }
    /* the file: header, section table, strings, methods, literals, IL map, hot, cold */
    size_t table = IM_HEADER_SIZE, o_str = align_up(table + IM_SECTION_KINDS * IM_SECTION_SIZE, 8);
    size_t o_meth = align_up(o_str + heap.len, 8), o_lit = align_up(o_meth + meth.len, 8);
    size_t o_map = align_up(o_lit + lit.len, 8), o_hot = align_up(o_map + map.len, IM_CODE_ALIGN);
    size_t o_cold = align_up(o_hot + hot_size, IM_CODE_ALIGN), total = o_cold + cold_size;
    if (rc == 0 && total > UINT32_MAX)
        rc = MANTRA_ERANGE;
    /* the code sections' offsets are known now: section-relative rvas become file offsets (in the
     * parts and their records), and the branches are resolved */
    for (size_t i = 0; rc == 0 && i < m->nmethods; i++) {
        mbuild *mb = &mbs[i];
        mb->rva[0] += (uint32_t)(mb->placed_cold ? o_cold : o_hot);
        if (mb->part[1].len)
            mb->rva[1] += (uint32_t)o_cold;
        resolve(mb);
        uint8_t *r = meth.p + i * IM_METHOD_SIZE;
        cm_store_u32(r + IM_M_HOT_RVA, mb->rva[0]);
        cm_store_u32(r + IM_M_COLD_RVA, mb->part[1].len ? mb->rva[1] : 0);
    }
    if (rc == 0) {
        out->p = calloc(total, 1);
        out->len = out->cap = total;
        if (out->p == NULL)
            rc = MANTRA_ENOMEM;
    }
    if (rc == 0) {
        uint8_t *b = out->p;
        memcpy(b + IM_H_MAGIC, IM_MAGIC, 8);
        cm_store_u16(b + IM_H_MAJOR, IM_MAJOR);
        cm_store_u16(b + IM_H_MINOR, IM_MINOR);
        cm_store_u32(b + IM_H_HEADER_SIZE, IM_HEADER_SIZE);
        cm_store_u64(b + IM_H_FILE_SIZE, total);
        cm_store_u32(b + IM_H_SECTIONS, IM_SECTION_KINDS);
        cm_store_u32(b + IM_H_SECTION_TABLE, (uint32_t)table);
        cm_store_u32(b + IM_H_METHODS, (uint32_t)m->nmethods);
        memcpy(b + IM_H_GUID, m->guid, 16);
        cm_store_u32(b + IM_H_MODULE_NAME, name_off);
        const size_t secs[IM_SECTION_KINDS][3] = {
            {IM_SEC_STRINGS, o_str, heap.len}, {IM_SEC_METHODS, o_meth, meth.len}, {IM_SEC_LITERALS, o_lit, lit.len},
            {IM_SEC_ILMAP, o_map, map.len},    {IM_SEC_HOT, o_hot, hot_size},      {IM_SEC_COLD, o_cold, cold_size}};
        for (size_t k = 0; k < IM_SECTION_KINDS; k++) {
            uint8_t *e = b + table + k * IM_SECTION_SIZE;
            cm_store_u32(e, (uint32_t)secs[k][0]);
            cm_store_u32(e + 4, (uint32_t)secs[k][1]);
            cm_store_u32(e + 8, (uint32_t)secs[k][2]);
        }
        if (heap.len)
            memcpy(b + o_str, heap.p, heap.len);
        if (meth.len)
            memcpy(b + o_meth, meth.p, meth.len);
        if (lit.len)
            memcpy(b + o_lit, lit.p, lit.len);
        if (map.len)
            memcpy(b + o_map, map.p, map.len);
        for (size_t i = 0; i < m->nmethods; i++)
            for (int p = 0; p < 2; p++)
                if (mbs[i].part[p].len)
                    memcpy(b + mbs[i].rva[p], mbs[i].part[p].p, mbs[i].part[p].len);
        cm_store_u32(b + IM_H_CHECKSUM, mantra_crc32(0, b, total));
    }
    free(heap.p);
    free(meth.p);
    free(lit.p);
    free(map.p);
    return rc;
}

/* Method's blocks: their first IL offsets (starts) and instruction counts (insns), either NULL,
 * up to cap of them; returns their number. */
static int64_t block_walk(const mantra_interp_module *m, size_t method, uint32_t *starts, uint32_t *insns,
                          size_t cap) {
    if (m == NULL || m->precompiled || method >= m->nmethods || ((starts == NULL && insns == NULL) && cap > 0))
        return MANTRA_EINVAL;
    const ip_method *x = &m->methods[method];
    uint8_t *mark = malloc((size_t)x->il_size + 1);
    if (mark == NULL)
        return MANTRA_ENOMEM;
    uint32_t n = ip_block_starts(x, mark);
    size_t b = SIZE_MAX;
    for (uint32_t o = 0; o < x->il_size;) {
        if (mark[o]) {
            b++;
            if (b < cap && starts != NULL)
                starts[b] = o;
            if (b < cap && insns != NULL)
                insns[b] = 0;
        }
        if (b < cap && insns != NULL)
            insns[b]++;
        uint32_t size = ip_insn_size(x->il + o, x->il_size - o);
        o += size ? size : 1;
    }
    free(mark);
    return n;
}

int64_t mantra_image_blocks(const mantra_interp_module *m, size_t method, uint32_t *il_offsets, size_t cap) {
    if (il_offsets == NULL && cap > 0)
        return MANTRA_EINVAL;
    return block_walk(m, method, il_offsets, NULL, cap);
}

int64_t mantra_image_block_insns(const mantra_interp_module *m, size_t method, uint32_t *insns, size_t cap) {
    if (insns == NULL && cap > 0)
        return MANTRA_EINVAL;
    return block_walk(m, method, NULL, insns, cap);
}

int mantra_image_build(const mantra_interp_module *m, const mantra_image_layout *layout, uint8_t **out, size_t *size) {
    /* an image holds at least one method (the checks of opening refuse one without) */
    if (m == NULL || m->precompiled || m->nmethods == 0 || layout == NULL || out == NULL || size == NULL)
        return MANTRA_EINVAL;
    *out = NULL;
    *size = 0;
    mbuild *mbs = calloc(m->nmethods ? m->nmethods : 1, sizeof *mbs);
    ranked *order = calloc(m->nmethods ? m->nmethods : 1, sizeof *order);
    int rc = mbs && order ? 0 : MANTRA_ENOMEM;
    for (size_t i = 0; rc == 0 && i < m->nmethods; i++)
        rc = split_method(&m->methods[i], &layout[i], &mbs[i]);
    /* places: hot parts by weight in the hot section (rvas relative to it for now), then every
     * cold part and whole cold method in method order in the cold section */
    size_t nhot = 0, hot_size = 0, cold_size = 0;
    if (rc == 0) {
        for (size_t i = 0; i < m->nmethods; i++)
            if (!mbs[i].placed_cold)
                order[nhot++] = (ranked){layout[i].weight, i};
        qsort(order, nhot, sizeof *order, by_weight);
        for (size_t k = 0; k < nhot; k++) {
            mbs[order[k].index].rva[0] = (uint32_t)hot_size;
            hot_size += mbs[order[k].index].part[0].len;
        }
        for (size_t i = 0; i < m->nmethods; i++)
            for (int p = 0; p < 2; p++)
                if ((p == 0 && mbs[i].placed_cold) || (p == 1 && mbs[i].part[1].len)) {
                    mbs[i].rva[p] = (uint32_t)cold_size;
                    cold_size += mbs[i].part[p].len;
                }
        if (hot_size > UINT32_MAX / 2 || cold_size > UINT32_MAX / 2)
            rc = MANTRA_ERANGE;
    }
    if (rc == 0) {
        buf file = {0};
        rc = write_image(m, mbs, hot_size, cold_size, &file);
        if (rc == 0) {
            *out = file.p;
            *size = file.len;
        } else {
            free(file.p);
        }
    }
    for (size_t i = 0; mbs != NULL && i < m->nmethods; i++) {
        free(mbs[i].part[0].p);
        free(mbs[i].part[1].p);
        free(mbs[i].rel);
        free(mbs[i].map);
        free(mbs[i].at_part);
        free(mbs[i].at_off);
    }
    free(mbs);
    free(order);
    return rc;
}
