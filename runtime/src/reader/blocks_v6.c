/* The blocks only V6 has (microsoft/perfview, src/TraceEvent/EventPipe/NetTraceFormat.md, "Version
 * 6"): Metadata (rows of V6 metadata records), Thread and RemoveThread (thread indexes and their OS
 * ids) and LabelList (activity ids, opcode, level, version and keywords shared by events). */
#include <string.h>

#include "common/le-internal.h"
#include "common/varint-internal.h"
#include "reader-internal.h"

int rd_parse_metadata_block_v6(mantra_reader *r, const uint8_t *p, size_t n, uint64_t off) {
    if (n < 2)
        return rd_fail(r, MANTRA_EFORMAT, off, "Metadata block of %zu bytes", n);
    size_t pos = 2 + (size_t)mantra_load_u16(p);
    if (pos > n)
        return rd_fail(r, MANTRA_EFORMAT, off, "Metadata block header larger than the block");
    while (pos < n) {
        if (n - pos < 2)
            return rd_fail(r, MANTRA_EFORMAT, off + pos, "metadata row size cut by the end of the block");
        size_t rs = mantra_load_u16(p + pos);
        pos += 2;
        if (rs > n - pos)
            return rd_fail(r, MANTRA_EFORMAT, off + pos - 2, "metadata row of %zu bytes exceeds the block", rs);
        mantra_trace_metadata *m;
        const char *what = NULL;
        int rc = rd_parse_metadata_v6(&r->arena, p + pos, rs, &m, &what);
        if (rc < 0)
            return rd_fail(r, rc, off + pos, "bad metadata row: %s", what ? what : "?");
        rc = rd_define_metadata(r, m, off + pos);
        if (rc < 0)
            return rc;
        pos += rs;
    }
    return 0;
}

static size_t skip_str8(const uint8_t *p, size_t n) {
    uint64_t len;
    size_t k = cm_varint_get(p, n, CM_VARINT32_MAX_BYTES, &len);
    if (k == 0 || len > n - k)
        return 0;
    return k + (size_t)len;
}

int rd_parse_thread_block(mantra_reader *r, const uint8_t *p, size_t n, uint64_t off) {
    size_t pos = 0;
    while (pos < n) {
        if (n - pos < 2)
            return rd_fail(r, MANTRA_EFORMAT, off + pos, "thread row size cut by the end of the block");
        size_t rs = mantra_load_u16(p + pos);
        size_t row = pos;
        pos += 2;
        if (rs > n - pos)
            return rd_fail(r, MANTRA_EFORMAT, off + row, "thread row of %zu bytes exceeds the block", rs);
        size_t end = pos + rs;
        uint64_t index, tid = 0, v;
        size_t k = cm_varint_get(p + pos, end - pos, CM_VARINT64_MAX_BYTES, &index);
        if (k == 0)
            return rd_fail(r, MANTRA_EFORMAT, off + pos, "bad thread index varint");
        pos += k;
        while (pos < end) {
            uint8_t kind = p[pos++];
            switch (kind) {
            case 1:
                k = skip_str8(p + pos, end - pos);
                break;
            case 2:
                k = cm_varint_get(p + pos, end - pos, CM_VARINT64_MAX_BYTES, &v);
                break;
            case 3:
                k = cm_varint_get(p + pos, end - pos, CM_VARINT64_MAX_BYTES, &tid);
                break;
            case 4:
                k = skip_str8(p + pos, end - pos);
                if (k) {
                    size_t k2 = skip_str8(p + pos + k, end - pos - k);
                    k = k2 ? k + k2 : 0;
                }
                break;
            default:
                return rd_fail(r, MANTRA_EFORMAT, off + pos - 1, "unknown thread row item kind %u", kind);
            }
            if (k == 0)
                return rd_fail(r, MANTRA_EFORMAT, off + pos, "bad value of thread row item kind %u", kind);
            pos += k;
        }
        if (cm_map_get(&r->threads, index))
            return rd_fail(r, MANTRA_EFORMAT, off + row, "thread index %llu declared twice",
                           (unsigned long long)index);
        rd_forget_threads(r);
        if (cm_map_put(&r->threads, index, tid) < 0)
            return rd_fail(r, MANTRA_ENOMEM, off, "out of memory");
    }
    return 0;
}

int rd_parse_remove_thread_block(mantra_reader *r, const uint8_t *p, size_t n, uint64_t off) {
    size_t pos = 0;
    while (pos < n) {
        uint64_t index, s;
        size_t k = cm_varint_get(p + pos, n - pos, CM_VARINT64_MAX_BYTES, &index);
        if (k == 0)
            return rd_fail(r, MANTRA_EFORMAT, off + pos, "bad thread index varint in a RemoveThread block");
        size_t k2 = cm_varint_get(p + pos + k, n - pos - k, CM_VARINT32_MAX_BYTES, &s);
        if (k2 == 0)
            return rd_fail(r, MANTRA_EFORMAT, off + pos + k, "bad sequence number varint in a RemoveThread block");
        if (!cm_map_get(&r->threads, index))
            return rd_fail(r, MANTRA_EFORMAT, off + pos, "RemoveThread of unknown thread index %llu",
                           (unsigned long long)index);
        uint64_t *last = rd_thread_seq(r, index, (uint32_t)s);
        if (last == NULL)
            return rd_fail(r, MANTRA_ENOMEM, off, "out of memory");
        rd_note_seq(r, last, (uint32_t)s);
        cm_map_del(&r->seq, index);
        cm_map_del(&r->threads, index);
        r->seq_valid = 0;
        rd_forget_threads(r);
        pos += k + k2;
    }
    return 0;
}

int rd_parse_label_block(mantra_reader *r, const uint8_t *p, size_t n, uint64_t off) {
    if (n < 8)
        return rd_fail(r, MANTRA_EFORMAT, off, "LabelList block of %zu bytes (at least 8 expected)", n);
    uint32_t first = mantra_load_u32(p), count = mantra_load_u32(p + 4);
    size_t pos = 8;
    if (first == 0)
        return rd_fail(r, MANTRA_EFORMAT, off, "LabelList block with first index 0");
    for (uint32_t i = 0; i < count; i++) {
        rd_label_list l;
        memset(&l, 0, sizeof l);
        for (;;) {
            if (pos >= n)
                return rd_fail(r, MANTRA_EFORMAT, off + pos, "label list %u cut by the end of the block", first + i);
            uint8_t kb = p[pos++];
            uint8_t kind = kb & 0x7f;
            size_t left = n - pos, k = 0;
            uint64_t v;
            switch (kind) {
            case 1:
            case 2:
                if (left < 16)
                    break;
                {
                    cm_load_guid(kind == 1 ? &l.activity : &l.related, p + pos);
                    if (kind == 1)
                        l.has_activity = 1;
                    else
                        l.has_related = 1;
                }
                k = 16;
                break;
            case 3:
                k = left >= 16 ? 16 : 0;
                break;
            case 4:
            case 8:
                if (left >= 8) {
                    k = 8;
                    if (kind == 8) {
                        l.keywords = mantra_load_u64(p + pos);
                        l.has_keywords = 1;
                    }
                }
                break;
            case 5:
                k = skip_str8(p + pos, left);
                if (k) {
                    size_t k2 = skip_str8(p + pos + k, left - k);
                    k = k2 ? k + k2 : 0;
                }
                break;
            case 6:
                k = skip_str8(p + pos, left);
                if (k) {
                    size_t k2 = cm_varint_get(p + pos + k, left - k, CM_VARINT64_MAX_BYTES, &v);
                    k = k2 ? k + k2 : 0;
                }
                break;
            case 7:
            case 9:
            case 10:
                if (left >= 1) {
                    k = 1;
                    if (kind == 7) {
                        l.opcode = p[pos];
                        l.has_opcode = 1;
                    } else if (kind == 9) {
                        l.level = p[pos];
                        l.has_level = 1;
                    } else {
                        l.version = p[pos];
                        l.has_version = 1;
                    }
                }
                break;
            default:
                return rd_fail(r, MANTRA_EFORMAT, off + pos - 1, "unknown label kind %u", kind);
            }
            if (k == 0)
                return rd_fail(r, MANTRA_EFORMAT, off + pos, "bad value of label kind %u", kind);
            pos += k;
            if (kb & 0x80)
                break;
        }
        if (rd_grow((void **)&r->label_lists, &r->caplabels, r->nlabels + 1, sizeof *r->label_lists) < 0 ||
            cm_map_put(&r->labels, (uint64_t)first + i, r->nlabels) < 0)
            return rd_fail(r, MANTRA_ENOMEM, off, "out of memory");
        r->label_lists[r->nlabels++] = l;
    }
    if (pos != n)
        return rd_fail(r, MANTRA_EFORMAT, off + pos, "%zu unexpected bytes after the label lists", n - pos);
    return 0;
}
