/* The V4/V5 stream: FastSerialization objects (microsoft/perfview,
 * src/TraceEvent/EventPipe/NetTraceFormat_v5.md, "Nettrace" header and object framing; dotnet/runtime,
 * src/native/eventpipe/ep-block.c, block size and alignment padding): the Trace object, then block
 * objects (EventBlock, MetadataBlock, StackBlock, SPBlock) until the end-of-stream tag. */
#include <string.h>

#include "common/le-internal.h"
#include "reader-internal.h"

static int parse_trace_payload_v4(mantra_reader *r, const uint8_t *p) {
    for (int i = 0; i < 8; i++)
        r->info.sync_time_utc[i] = (int16_t)mantra_load_u16(p + 2 * i);
    r->info.sync_time_qpc = (int64_t)mantra_load_u64(p + 16);
    r->info.qpc_frequency = (int64_t)mantra_load_u64(p + 24);
    r->info.pointer_size = mantra_load_u32(p + 32);
    r->info.process_id = mantra_load_u32(p + 36);
    r->info.processor_count = mantra_load_u32(p + 40);
    r->info.expected_cpu_sampling_rate = mantra_load_u32(p + 44);
    if (r->info.pointer_size != 4 && r->info.pointer_size != 8)
        return rd_fail(r, MANTRA_EFORMAT, rd_in_offset(r) + 32, "pointer size %u in the Trace object (expected 4 or 8)",
                       r->info.pointer_size);
    return 0;
}

/* Reads a FastSerialization type header (after the object's 0x05): 05 01 ver minver len name 06.
 * name receives up to 63 characters. */
static int read_type_header(mantra_reader *r, uint32_t *version, char *name, size_t name_cap) {
    uint64_t off = rd_in_offset(r);
    int rc = rd_in_ensure(r, 15);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return rd_fail(r, MANTRA_ETRUNCATED, off - 1, "input ends inside an object header (incomplete trace)");
    const uint8_t *p = r->buf + r->pos;
    if (p[0] != 0x05 || p[1] != 0x01)
        return rd_fail(r, MANTRA_EFORMAT, off, "expected a type header (05 01), found %02x %02x", p[0], p[1]);
    *version = mantra_load_u32(p + 2);
    uint32_t len = mantra_load_u32(p + 10);
    if (len > 38)
        return rd_fail(r, MANTRA_EFORMAT, off + 10, "object type name length %u (at most 38 expected)", len);
    rc = rd_in_ensure(r, 15 + (size_t)len);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return rd_fail(r, MANTRA_ETRUNCATED, off - 1, "input ends inside an object header (incomplete trace)");
    p = r->buf + r->pos;
    size_t k = len < name_cap - 1 ? len : name_cap - 1;
    memcpy(name, p + 14, k);
    name[k] = '\0';
    if (p[14 + len] != 0x06)
        return rd_fail(r, MANTRA_EFORMAT, off + 14 + len, "expected EndObject (06) after the type name, found %02x",
                       p[14 + len]);
    for (uint32_t i = 0; i < len; i++)
        if (p[14 + i] < 0x20 || p[14 + i] > 0x7e)
            return rd_fail(r, MANTRA_EFORMAT, off + 14, "object type name is not printable ASCII");
    r->pos += 15 + len;
    return 0;
}

int rd_open_v4(mantra_reader *r) {
    /* "Nettrace" + int32 20 + "!FastSerialization.1" */
    int rc = rd_in_ensure(r, 24);
    if (rc < 0)
        return rc;
    if (rc == 0 || memcmp(r->buf + r->pos + 4, RD_FS_SIGNATURE, 20) != 0 || mantra_load_u32(r->buf + r->pos) != 20)
        return rd_fail(r, rc == 0 ? MANTRA_ETRUNCATED : MANTRA_EFORMAT, 8,
                       "expected the FastSerialization header (int32 20, \"!FastSerialization.1\")");
    r->pos += 24;
    rc = rd_in_ensure(r, 1);
    if (rc < 0)
        return rc;
    if (rc == 0 || r->buf[r->pos] != 0x05)
        return rd_fail(r, rc == 0 ? MANTRA_ETRUNCATED : MANTRA_EFORMAT, rd_in_offset(r),
                       "expected the Trace object (BeginPrivateObject 05)");
    r->pos++;
    uint32_t version;
    char name[64];
    rc = read_type_header(r, &version, name, sizeof name);
    if (rc < 0)
        return rc;
    if (strcmp(name, "Trace") != 0)
        return rd_fail(r, MANTRA_EFORMAT, rd_in_offset(r), "first object is \"%s\" (expected \"Trace\")", name);
    if (version != 4)
        return rd_fail(r, MANTRA_EUNSUPPORTED, rd_in_offset(r),
                       "Trace object version %u is not supported (nettrace V4/V5 files have version 4)", version);
    rc = rd_in_ensure(r, 49);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return rd_fail(r, MANTRA_ETRUNCATED, rd_in_offset(r), "input ends inside the Trace object (48 bytes expected)");
    rc = parse_trace_payload_v4(r, r->buf + r->pos);
    if (rc < 0)
        return rc;
    if (r->buf[r->pos + 48] != 0x06)
        return rd_fail(r, MANTRA_EFORMAT, rd_in_offset(r) + 48, "expected EndObject (06) after the Trace object, found %02x",
                       r->buf[r->pos + 48]);
    r->pos += 49;
    r->info.format_version = 4;
    return 0;
}

int rd_next_object_v4(mantra_reader *r) {
    uint64_t obj = rd_in_offset(r);
    int rc = rd_in_ensure(r, 1);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return rd_truncated_at_boundary(r);
    uint8_t tag = r->buf[r->pos];
    if (tag == 0x01) {
        r->pos++;
        return rd_end_of_stream(r);
    }
    if (tag != 0x05)
        return rd_fail(r, MANTRA_EFORMAT, obj, "expected a block object (tag 05) or the end-of-stream tag (01), found %02x",
                       tag);
    r->pos++;
    uint32_t version;
    char name[64];
    rc = read_type_header(r, &version, name, sizeof name);
    if (rc < 0)
        return rc;
    int kind;
    if (strcmp(name, "EventBlock") == 0)
        kind = 0;
    else if (strcmp(name, "MetadataBlock") == 0)
        kind = 1;
    else if (strcmp(name, "StackBlock") == 0)
        kind = 2;
    else if (strcmp(name, "SPBlock") == 0)
        kind = 3;
    else
        return rd_fail(r, MANTRA_EFORMAT, obj, "unknown object type \"%s\" (expected EventBlock, MetadataBlock, "
                       "StackBlock or SPBlock)", name);
    if (version > 2)
        return rd_fail(r, MANTRA_EUNSUPPORTED, obj, "%s version %u is not supported (at most 2)", name, version);
    uint64_t size_off = rd_in_offset(r);
    rc = rd_in_ensure(r, 4);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return rd_fail(r, MANTRA_ETRUNCATED, obj, "%s truncated: input ends in its block size field (incomplete trace)",
                       name);
    uint32_t bsize = mantra_load_u32(r->buf + r->pos);
    uint64_t after = size_off + 4;
    size_t pad = (size_t)((4 - (after & 3)) & 3);
    if (bsize > r->opt.max_block_size)
        return rd_fail(r, MANTRA_EFORMAT, size_off, "%s declares %u content bytes (more than the limit of %zu)", name,
                       bsize, r->opt.max_block_size);
    size_t need = 4 + pad + (size_t)bsize + 1;
    rc = rd_in_ensure(r, need);
    if (rc < 0)
        return rc;
    if (rc == 0) {
        size_t have = rd_in_avail(r);
        return rd_fail(r, MANTRA_ETRUNCATED, obj,
                       "%s truncated: it declares %u content bytes ending at offset %llu, the input ends at offset "
                       "%llu (incomplete trace)",
                       name, bsize, (unsigned long long)(after + pad + bsize), (unsigned long long)(size_off + have));
    }
    const uint8_t *content = r->buf + r->pos + 4 + pad;
    uint64_t coff = after + pad;
    if (content[bsize] != 0x06)
        return rd_fail(r, MANTRA_EFORMAT, coff + bsize, "expected EndObject (06) after the %s content, found %02x", name,
                       content[bsize]);
    r->pos += need;
    r->stats.bytes_read = rd_in_offset(r);
    r->stats.blocks++;
    switch (kind) {
    case 0:
        return rd_start_rows(r, RD_BLK_EVENT, content, bsize, coff);
    case 1:
        return rd_start_rows(r, RD_BLK_METADATA, content, bsize, coff);
    case 2:
        return rd_parse_stack_block(r, content, bsize, coff);
    default:
        return rd_parse_sp_block(r, content, bsize, coff);
    }
}
