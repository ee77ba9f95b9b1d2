/* nettrace_stacks.c - the nettrace writer's stack table: the distinct stacks of the current
 * sequence-point region (ids restart at 1 after each SPBlock), interned by hash, and their entries
 * in the pending StackBlock (FirstId, Count, then int32 byte size + instruction pointers per
 * stack). The per-event lookup is nw_stack_id() in nettrace-internal.h; this file adds new stacks.
 *
 * Sources: dotnet/runtime, src/native/eventpipe/ep-block.c (the stack block: every event gets a
 * stack id, an empty stack is a size-0 entry); microsoft/perfview, src/TraceEvent/EventPipe/
 * StackCache.cs (ids are looked up when the event header is read and forgotten at a sequence
 * point). */
#include <stdlib.h>
#include <string.h>

#include "format/nettrace-internal.h"

void nw_stacks_new_region(mantra_nettrace_writer *w) {
    w->stack_count = 0;
    w->stack_ips_len = 0;
    w->stack_first_pending = 1; /* ids restart at 1 after each sequence point */
    w->empty_stack_id = 0;
    if (w->stack_slots)
        memset(w->stack_slots, 0, w->stack_slot_count * sizeof *w->stack_slots);
}

uint32_t nw_stack_add(mantra_nettrace_writer *w, const uint64_t *ips, uint32_t frames, uint64_t h) {
    uint64_t mask_ip = nw_stack_ip_mask(w);
    /* Make room in the pending StackBlock first (a flush keeps the region). */
    size_t entry = 4 + (size_t)frames * w->opts.pointer_size;
    if (w->stacks.rows && w->stacks.len + entry > w->opts.block_bytes) {
        if (nw_flush_blocks(w) != MANTRA_OK)
            return 0;
    }
    if (cm_grow((void **)&w->stack_list, &w->stack_cap, (size_t)w->stack_count + 1, sizeof *w->stack_list, 256) !=
            MANTRA_OK ||
        cm_grow((void **)&w->stack_ips, &w->stack_ips_cap, w->stack_ips_len + frames, sizeof *w->stack_ips, 4096) !=
            MANTRA_OK)
        return 0;
    if ((w->stack_count + 1) * 2 > w->stack_slot_count) {
        uint32_t count = w->stack_slot_count ? w->stack_slot_count * 2 : 1024;
        uint32_t *slots = calloc(count, sizeof *slots);
        if (!slots)
            return 0;
        for (uint32_t j = 0; j < w->stack_count; j++) {
            uint32_t i = (uint32_t)w->stack_list[j].hash & (count - 1);
            while (slots[i])
                i = (i + 1) & (count - 1);
            slots[i] = j + 1;
        }
        free(w->stack_slots);
        w->stack_slots = slots;
        w->stack_slot_count = count;
    }
    nw_stack *e = &w->stack_list[w->stack_count++];
    e->offset = (uint32_t)w->stack_ips_len;
    e->frames = frames;
    e->hash = h;
    uint8_t *p = nw_block_end(&w->stacks);
    p = cm_store_u32(p, (uint32_t)(frames * w->opts.pointer_size));
    for (uint32_t i = 0; i < frames; i++) {
        uint64_t ip = ips[i] & mask_ip;
        w->stack_ips[w->stack_ips_len++] = ip;
        p = w->opts.pointer_size == 4 ? cm_store_u32(p, (uint32_t)ip) : cm_store_u64(p, ip);
    }
    w->stacks.len += entry;
    w->stacks.rows++;
    w->st.stacks++;
    uint32_t id = w->stack_count;
    uint32_t mask = w->stack_slot_count - 1;
    uint32_t i = (uint32_t)h & mask;
    while (w->stack_slots[i])
        i = (i + 1) & mask;
    w->stack_slots[i] = id;
    return id;
}
