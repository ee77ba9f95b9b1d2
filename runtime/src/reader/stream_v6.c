/* The V6 stream: blocks of a 4-byte header (24-bit size, 8-bit kind) and their content
 * (microsoft/perfview, src/TraceEvent/EventPipe/NetTraceFormat.md, "Version 6" blocks): the Trace
 * block with its key/value pairs, then the other blocks until EndOfStream. */
#include <stdlib.h>
#include <string.h>

#include "common/le-internal.h"
#include "reader-internal.h"

int rd_open_v6(mantra_reader *r) {
    uint64_t off = rd_in_offset(r);
    int rc = rd_in_ensure(r, 4);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return rd_fail(r, MANTRA_ETRUNCATED, off, "input ends before the Trace block");
    uint32_t h = mantra_load_u32(r->buf + r->pos);
    uint32_t size = h & 0xFFFFFF, kind = h >> 24;
    if (kind != 1)
        return rd_fail(r, MANTRA_EFORMAT, off, "first block has kind %u (expected 1, Trace)", kind);
    rc = rd_in_ensure(r, 4 + (size_t)size);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return rd_fail(r, MANTRA_ETRUNCATED, off, "Trace block truncated (%u bytes declared, %zu present)", size,
                       rd_in_avail(r) - 4);
    const uint8_t *p = r->buf + r->pos + 4;
    if (size < 40)
        return rd_fail(r, MANTRA_EFORMAT, off + 4, "Trace block of %u bytes (at least 40 expected)", size);
    for (int i = 0; i < 8; i++)
        r->info.sync_time_utc[i] = (int16_t)mantra_load_u16(p + 2 * i);
    r->info.sync_time_qpc = (int64_t)mantra_load_u64(p + 16);
    r->info.qpc_frequency = (int64_t)mantra_load_u64(p + 24);
    r->info.pointer_size = mantra_load_u32(p + 32);
    uint32_t kvs = mantra_load_u32(p + 36);
    if (r->info.pointer_size != 4 && r->info.pointer_size != 8)
        return rd_fail(r, MANTRA_EFORMAT, off + 36, "pointer size %u in the Trace block (expected 4 or 8)",
                       r->info.pointer_size);
    if (kvs > (size - 40) / 2)
        return rd_fail(r, MANTRA_EFORMAT, off + 44, "%u key/value pairs do not fit in the Trace block", kvs);
    const char **keys = cm_arena_alloc(&r->arena, (kvs + 1) * sizeof(char *));
    const char **vals = cm_arena_alloc(&r->arena, (kvs + 1) * sizeof(char *));
    if (!keys || !vals)
        return rd_fail(r, MANTRA_ENOMEM, off, "out of memory");
    size_t pos = 40;
    for (uint32_t i = 0; i < kvs; i++) {
        size_t k = rd_v6_string(&r->arena, p + pos, size - pos, &keys[i]);
        if (k == 0)
            return rd_fail(r, MANTRA_EFORMAT, off + 4 + pos, "bad key string in the Trace block");
        pos += k;
        k = rd_v6_string(&r->arena, p + pos, size - pos, &vals[i]);
        if (k == 0)
            return rd_fail(r, MANTRA_EFORMAT, off + 4 + pos, "bad value string in the Trace block");
        pos += k;
        unsigned long v = strtoul(vals[i], NULL, 10);
        if (strcmp(keys[i], "HardwareThreadCount") == 0)
            r->info.processor_count = (uint32_t)v;
        else if (strcmp(keys[i], "ProcessId") == 0)
            r->info.process_id = (uint32_t)v;
        else if (strcmp(keys[i], "ExpectedCPUSamplingRate") == 0)
            r->info.expected_cpu_sampling_rate = (uint32_t)v;
    }
    r->info.kv_count = kvs;
    r->info.keys = keys;
    r->info.values = vals;
    r->pos += 4 + (size_t)size;
    r->info.format_version = 6;
    r->v6 = 1;
    r->stats.blocks++;
    return 0;
}

int rd_next_block_v6(mantra_reader *r) {
    uint64_t off = rd_in_offset(r);
    int rc = rd_in_ensure(r, 4);
    if (rc < 0)
        return rc;
    if (rc == 0) {
        if (rd_in_avail(r) == 0)
            return rd_truncated_at_boundary(r);
        return rd_fail(r, MANTRA_ETRUNCATED, off, "input ends inside a block header (incomplete trace)");
    }
    uint32_t h = mantra_load_u32(r->buf + r->pos);
    uint32_t size = h & 0xFFFFFF, kind = h >> 24;
    rc = rd_in_ensure(r, 4 + (size_t)size);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return rd_fail(r, MANTRA_ETRUNCATED, off,
                       "block of kind %u truncated: it declares %u content bytes ending at offset %llu, the input ends "
                       "at offset %llu (incomplete trace)",
                       kind, size, (unsigned long long)(off + 4 + size), (unsigned long long)(off + rd_in_avail(r)));
    const uint8_t *content = r->buf + r->pos + 4;
    r->pos += 4 + (size_t)size;
    r->stats.bytes_read = rd_in_offset(r);
    uint64_t coff = off + 4;
    if (kind == 0) {
        if (size != 0)
            return rd_fail(r, MANTRA_EFORMAT, off, "EndOfStream block with %u content bytes (0 expected)", size);
        return rd_end_of_stream(r);
    }
    r->stats.blocks++;
    switch (kind) {
    case 1:
        return rd_fail(r, MANTRA_EFORMAT, off, "a second Trace block");
    case 2:
        return rd_start_rows(r, RD_BLK_EVENT, content, size, coff);
    case 3:
        return rd_parse_metadata_block_v6(r, content, size, coff);
    case 4:
        return rd_parse_sp_block(r, content, size, coff);
    case 5:
        return rd_parse_stack_block(r, content, size, coff);
    case 6:
        return rd_parse_thread_block(r, content, size, coff);
    case 7:
        return rd_parse_remove_thread_block(r, content, size, coff);
    case 8:
        return rd_parse_label_block(r, content, size, coff);
    default:
        return 0; /* blocks of unknown kinds are skipped, as NetTraceFormat.md asks readers to */
    }
}
