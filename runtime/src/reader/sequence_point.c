/* Sequence point blocks (V4/V5 SPBlock, V6 SequencePoint): each ends a region: the sequence numbers
 * they carry count dropped events, queued sorted events are released, and the stacks and label lists
 * of the region are forgotten (V6 flags may also reset threads and metadata). */
#include "common/le-internal.h"
#include "common/varint-internal.h"
#include "reader-internal.h"

static void clear_region(mantra_reader *r) {
    rd_stacks_clear(r);
    r->nstack = 0;
    r->stack_len = 0;
    cm_map_clear(&r->labels);
    r->nlabels = 0;
}

int rd_parse_sp_block(mantra_reader *r, const uint8_t *p, size_t n, uint64_t off) {
    size_t pos;
    uint32_t count, flags = 0;
    if (!r->v6) {
        if (n < 12)
            return rd_fail(r, MANTRA_EFORMAT, off, "SPBlock of %zu bytes (at least 12 expected)", n);
        count = mantra_load_u32(p + 8);
        if ((n - 12) / 12 < count || n != 12 + (size_t)count * 12)
            return rd_fail(r, MANTRA_EFORMAT, off, "SPBlock of %zu bytes does not hold %u threads (%zu bytes expected)",
                           n, count, 12 + (size_t)count * 12);
        pos = 12;
    } else {
        if (n < 16)
            return rd_fail(r, MANTRA_EFORMAT, off, "SequencePoint block of %zu bytes (at least 16 expected)", n);
        flags = mantra_load_u32(p + 8);
        count = mantra_load_u32(p + 12);
        pos = 16;
    }
    if (r->order && rd_order_flush(r->order) < 0)
        return rd_fail(r, MANTRA_ENOMEM, off, "out of memory");
    for (uint32_t i = 0; i < count; i++) {
        uint64_t key, s;
        if (!r->v6) {
            key = mantra_load_u64(p + pos);
            s = mantra_load_u32(p + pos + 8);
            pos += 12;
        } else {
            size_t k = cm_varint_get(p + pos, n - pos, CM_VARINT64_MAX_BYTES, &key);
            if (k == 0)
                return rd_fail(r, MANTRA_EFORMAT, off + pos, "bad thread index varint in the SequencePoint block");
            pos += k;
            k = cm_varint_get(p + pos, n - pos, CM_VARINT32_MAX_BYTES, &s);
            if (k == 0)
                return rd_fail(r, MANTRA_EFORMAT, off + pos, "bad sequence number varint in the SequencePoint block");
            pos += k;
        }
        uint64_t *last = rd_thread_seq(r, key, (uint32_t)s);
        if (last == NULL)
            return rd_fail(r, MANTRA_ENOMEM, off, "out of memory");
        rd_note_seq(r, last, (uint32_t)s);
        *last = (uint32_t)s;
    }
    if (r->v6 && pos != n)
        return rd_fail(r, MANTRA_EFORMAT, off + pos, "%zu unexpected bytes at the end of the SequencePoint block",
                       n - pos);
    if (flags & 1) {
        cm_map_clear(&r->threads);
        cm_map_clear(&r->seq);
        r->seq_valid = 0;
        rd_forget_threads(r);
    }
    if (flags & 2) {
        cm_map_clear(&r->meta);
        rd_forget_all_meta(r);
    }
    clear_region(r);
    r->have_cur_thread = 0;
    r->stats.sequence_points++;
    return 0;
}
