/* Stack blocks (V4/V5 StackBlock, V6 Stack): the stacks of the current sequence-point region, stored
 * by id for the events that refer to them: ids within RD_DENSE_MAX of the region's first one in a
 * dense array (the runtime numbers stacks consecutively), others in the r->stacks map. */
#include <string.h>

#include "common/le-internal.h"
#include "reader-internal.h"

int rd_stack_put(mantra_reader *r, uint32_t id, size_t index) {
    if (r->stack_dense_n == 0 && r->stacks.count == 0)
        r->stack_base = id;
    uint32_t k = id - r->stack_base;
    if (id < r->stack_base || k >= RD_DENSE_MAX)
        return cm_map_put(&r->stacks, id, index);
    if (k >= r->stack_dense_n) {
        if (rd_grow((void **)&r->stack_dense, &r->stack_dense_cap, (size_t)k + 1, sizeof *r->stack_dense) < 0)
            return MANTRA_ENOMEM;
        memset(r->stack_dense + r->stack_dense_n, 0, ((size_t)k + 1 - r->stack_dense_n) * sizeof *r->stack_dense);
        r->stack_dense_n = (size_t)k + 1;
    }
    r->stack_dense[k] = (uint32_t)index + 1;
    return 0;
}

void rd_stacks_clear(mantra_reader *r) {
    cm_map_clear(&r->stacks);
    if (r->stack_dense_n)
        memset(r->stack_dense, 0, r->stack_dense_n * sizeof *r->stack_dense);
    r->stack_dense_n = 0;
}

int rd_parse_stack_block(mantra_reader *r, const uint8_t *p, size_t n, uint64_t off) {
    if (n < 8)
        return rd_fail(r, MANTRA_EFORMAT, off, "StackBlock of %zu bytes (at least 8 expected)", n);
    uint32_t first = mantra_load_u32(p);
    size_t pos = 8;
    uint32_t id = first;
    uint32_t ps = r->info.pointer_size;
    while (pos < n) {
        if (n - pos < 4)
            return rd_fail(r, MANTRA_EFORMAT, off + pos, "stack size field cut by the end of the StackBlock");
        uint32_t size = mantra_load_u32(p + pos);
        pos += 4;
        if (size > n - pos)
            return rd_fail(r, MANTRA_EFORMAT, off + pos - 4, "stack of %u bytes exceeds the StackBlock", size);
        if (size % ps != 0)
            return rd_fail(r, MANTRA_EFORMAT, off + pos - 4, "stack of %u bytes is not a multiple of the pointer size %u",
                           size, ps);
        if (rd_grow((void **)&r->stack_refs, &r->capstack, r->nstack + 1, sizeof *r->stack_refs) < 0 ||
            rd_grow((void **)&r->stack_data, &r->stack_cap, r->stack_len + size + 1, 1) < 0 ||
            rd_stack_put(r, id, r->nstack) < 0)
            return rd_fail(r, MANTRA_ENOMEM, off + pos, "out of memory");
        memcpy(r->stack_data + r->stack_len, p + pos, size);
        r->stack_refs[r->nstack].off = r->stack_len;
        r->stack_refs[r->nstack].count = size / ps;
        r->nstack++;
        r->stack_len += size;
        pos += size;
        id++;
        r->stats.stacks++;
    }
    return 0;
}
