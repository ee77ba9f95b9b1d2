/* Metadata-driven payload decoding (mantra_decode_payload, mantra_decode_event) through a visitor:
 * the payload encodings of the nettrace type codes (microsoft/perfview,
 * src/TraceEvent/EventPipe/EventPipeMetadata.cs and NetTraceFormat.md, the TypeCode table and the V6
 * additions), read with the payload cursor (core/cursor-internal.h) */
#include <string.h>

#include "core/cursor-internal.h"
#include "field_plan-internal.h"
#include "reader-internal.h"

typedef struct dc {
    mantra_cursor cur;
    const mantra_field_visitor *v;
    void *ctx;
    int depth;
} dc;

static const mantra_field_visitor null_visitor = {0};

/* Byte size of a fixed-size type, 0 for variable-size ones. */
static size_t fixed_size(const mantra_field_desc *f, int depth) {
    if (depth > 32)
        return 0;
    switch (f->type) {
    case MANTRA_TYPE_SBYTE:
    case MANTRA_TYPE_BYTE:
    case MANTRA_TYPE_UTF8_CODE_UNIT:
    case MANTRA_TYPE_BOOLEAN8:
        return 1;
    case MANTRA_TYPE_CHAR:
    case MANTRA_TYPE_INT16:
    case MANTRA_TYPE_UINT16:
        return 2;
    case MANTRA_TYPE_BOOLEAN:
    case MANTRA_TYPE_INT32:
    case MANTRA_TYPE_UINT32:
    case MANTRA_TYPE_SINGLE:
    case MANTRA_TYPE_RELLOC:
    case MANTRA_TYPE_DATALOC:
        return 4;
    case MANTRA_TYPE_INT64:
    case MANTRA_TYPE_UINT64:
    case MANTRA_TYPE_DOUBLE:
    case MANTRA_TYPE_DATETIME:
        return 8;
    case MANTRA_TYPE_DECIMAL:
    case MANTRA_TYPE_GUID:
        return 16;
    case MANTRA_TYPE_FIXED_ARRAY: {
        size_t e = f->element ? fixed_size(f->element, depth + 1) : 0;
        if (e == 0 || f->fixed_count == 0)
            return 0; /* an empty fixed array is treated as variable (size 0 either way) */
        return e * f->fixed_count;
    }
    case MANTRA_TYPE_OBJECT: {
        size_t s = 0;
        for (uint32_t i = 0; i < f->field_count; i++) {
            size_t e = fixed_size(&f->fields[i], depth + 1);
            if (e == 0)
                return 0;
            s += e;
        }
        return s;
    }
    default:
        return 0;
    }
}

static int call(int (*fn)(void *, const mantra_value *), void *ctx, const mantra_value *v) {
    return fn ? fn(ctx, v) : 0;
}

static int decode_one(dc *c, const mantra_field_desc *f, const char *name, uint64_t index);

static int decode_elements(dc *c, const mantra_field_desc *f, const mantra_field_desc *elem, size_t count,
                           mantra_value *av) {
    int rc = call(c->v->begin_array, c->ctx, av);
    if (rc < 0)
        return rc;
    const mantra_field_visitor *saved = c->v;
    if (rc == 1)
        c->v = &null_visitor;
    for (size_t i = 0; i < count; i++) {
        rc = decode_one(c, elem, "", i);
        if (rc < 0) {
            c->v = saved;
            return rc;
        }
    }
    c->v = saved;
    av->size = c->cur.pos - (size_t)(av->data - c->cur.data);
    (void)f;
    return call(c->v->end_array, c->ctx, av);
}

static int decode_located(dc *c, const mantra_field_desc *f, const char *name, uint64_t index) {
    /* RelLoc / DataLoc: uint32 = size << 16 | offset; fixed-size elements at the location. */
    uint32_t loc;
    if (f->element == NULL || mantra__cursor_u32(&c->cur, &loc) < 0)
        return MANTRA_EFORMAT;
    size_t size = loc >> 16, off = loc & 0xFFFF;
    size_t base = f->type == MANTRA_TYPE_RELLOC ? c->cur.pos : 0;
    size_t esize = fixed_size(f->element, 0);
    if (esize == 0 || base + off > c->cur.size || size > c->cur.size - (base + off) || size % esize != 0)
        return MANTRA_EFORMAT;
    dc sub = *c;
    sub.cur.size = base + off + size;
    sub.cur.pos = base + off;
    mantra_value av;
    memset(&av, 0, sizeof av);
    av.field = f;
    av.name = name;
    av.index = index;
    av.type = f->type;
    av.data = c->cur.data + base + off;
    av.size = size;
    av.count = size / esize;
    av.depth = (unsigned)c->depth;
    av.offset = c->cur.pos - 4; /* the location word */
    sub.depth = c->depth + 1;
    return decode_elements(&sub, f, f->element, av.count, &av);
}

static int decode_one(dc *c, const mantra_field_desc *f, const char *name, uint64_t index) {
    mantra_value v;
    memset(&v, 0, sizeof v);
    v.field = f;
    v.name = name;
    v.type = f->type;
    v.depth = (unsigned)c->depth;
    v.index = index;
    v.offset = c->cur.pos;
    mantra_cursor *cur = &c->cur;
    const uint8_t *p = cur->data + cur->pos;
    if (c->depth > 64)
        return MANTRA_EFORMAT;
    switch (f->type) {
    case MANTRA_TYPE_BOOLEAN:
    case MANTRA_TYPE_INT32:
    case MANTRA_TYPE_UINT32: {
        uint32_t x;
        if (mantra__cursor_u32(cur, &x) < 0)
            return MANTRA_EFORMAT;
        v.u = x;
        v.i = f->type == MANTRA_TYPE_INT32 ? (int64_t)(int32_t)x : (int64_t)x;
        break;
    }
    case MANTRA_TYPE_CHAR:
    case MANTRA_TYPE_INT16:
    case MANTRA_TYPE_UINT16: {
        uint16_t x;
        if (mantra__cursor_u16(cur, &x) < 0)
            return MANTRA_EFORMAT;
        v.u = x;
        v.i = f->type == MANTRA_TYPE_INT16 ? (int64_t)(int16_t)x : (int64_t)x;
        break;
    }
    case MANTRA_TYPE_SBYTE:
    case MANTRA_TYPE_BYTE:
    case MANTRA_TYPE_UTF8_CODE_UNIT:
    case MANTRA_TYPE_BOOLEAN8: {
        uint8_t x;
        if (mantra__cursor_u8(cur, &x) < 0)
            return MANTRA_EFORMAT;
        v.u = x;
        v.i = f->type == MANTRA_TYPE_SBYTE ? (int64_t)(int8_t)x : (int64_t)x;
        break;
    }
    case MANTRA_TYPE_INT64:
    case MANTRA_TYPE_UINT64:
    case MANTRA_TYPE_DATETIME:
        if (mantra__cursor_u64(cur, &v.u) < 0)
            return MANTRA_EFORMAT;
        v.i = (int64_t)v.u;
        break;
    case MANTRA_TYPE_SINGLE: {
        float x;
        if (mantra__cursor_f32(cur, &x) < 0)
            return MANTRA_EFORMAT;
        v.d = x;
        break;
    }
    case MANTRA_TYPE_DOUBLE:
        if (mantra__cursor_f64(cur, &v.d) < 0)
            return MANTRA_EFORMAT;
        break;
    case MANTRA_TYPE_DECIMAL:
        if (mantra__cursor_bytes(cur, 16, &v.data) < 0)
            return MANTRA_EFORMAT;
        v.size = 16;
        break;
    case MANTRA_TYPE_GUID:
        if (mantra__cursor_guid(cur, &v.guid) < 0)
            return MANTRA_EFORMAT;
        v.data = p;
        v.size = 16;
        break;
    case MANTRA_TYPE_STRING: {
        mantra_str16 s;
        if (mantra__cursor_str16(cur, &s) < 0)
            return MANTRA_EFORMAT;
        v.data = s.data;
        v.size = s.units * 2;
        v.count = s.units;
        break;
    }
    case MANTRA_TYPE_VARINT:
    case MANTRA_TYPE_VARUINT:
        if (mantra__cursor_varint(cur, CM_VARINT64_MAX_BYTES, &v.u) < 0)
            return MANTRA_EFORMAT;
        v.i = f->type == MANTRA_TYPE_VARINT ? cm_zigzag_decode(v.u) : (int64_t)v.u;
        break;
    case MANTRA_TYPE_ARRAY:
    case MANTRA_TYPE_FIXED_ARRAY: {
        size_t count;
        if (f->element == NULL)
            return MANTRA_EFORMAT;
        if (f->type == MANTRA_TYPE_ARRAY) {
            uint16_t n;
            if (mantra__cursor_u16(cur, &n) < 0)
                return MANTRA_EFORMAT;
            count = n;
        } else {
            count = f->fixed_count;
        }
        size_t es = fixed_size(f->element, 0);
        if (es && count > mantra__cursor_left(cur) / es)
            return MANTRA_EFORMAT;
        v.data = cur->data + cur->pos;
        v.size = es * count;
        v.count = count;
        c->depth++;
        int rc = decode_elements(c, f, f->element, count, &v);
        c->depth--;
        return rc;
    }
    case MANTRA_TYPE_RELLOC:
    case MANTRA_TYPE_DATALOC:
        return decode_located(c, f, name, index);
    case MANTRA_TYPE_OBJECT: {
        v.count = f->field_count;
        v.data = p;
        int rc = call(c->v->begin_object, c->ctx, &v);
        if (rc < 0)
            return rc;
        c->depth++;
        for (uint32_t i = 0; i < f->field_count; i++) {
            rc = decode_one(c, &f->fields[i], f->fields[i].name, 0);
            if (rc < 0) {
                c->depth--;
                return rc;
            }
        }
        c->depth--;
        v.size = (size_t)(cur->data + cur->pos - p);
        return call(c->v->end_object, c->ctx, &v);
    }
    default:
        return MANTRA_EFORMAT;
    }
    if (f->type != MANTRA_TYPE_STRING) {
        v.data = p;
        v.size = cur->pos - v.offset;
    } /* a scalar's bytes (strings: without the terminator) */
    return call(c->v->scalar, c->ctx, &v);
}

int mantra_decode_payload(const mantra_field_desc *fields, uint32_t count, const uint8_t *payload, size_t size,
                          uint32_t pointer_size, const mantra_field_visitor *visitor, void *ctx) {
    /* pointer_size is kept in the cursor but unused: metadata names Int32/Int64 explicitly for
     * pointer-sized fields */
    static const uint8_t empty[1];
    mantra_cursor cur = {payload ? payload : empty, payload ? size : 0, 0, pointer_size};
    dc c = {cur, visitor ? visitor : &null_visitor, ctx, 0};
    for (uint32_t i = 0; i < count; i++) {
        int rc = decode_one(&c, &fields[i], fields[i].name, 0);
        if (rc < 0)
            return rc;
    }
    return c.cur.pos < c.cur.size ? 1 : 0;
}

uint32_t rd_fields_fixed_size(const mantra_field_desc *fields, uint32_t count) {
    uint64_t s = 0;
    for (uint32_t i = 0; i < count; i++) {
        size_t e = fixed_size(&fields[i], 0);
        if (e == 0)
            return 0;
        s += e;
        if (s > UINT32_MAX)
            return 0;
    }
    return (uint32_t)s;
}

int rd_event_check_fields(const mantra_trace_event *e) {
    const mantra_trace_metadata *m = e->metadata;
    if (m->fields_from_manifest && m->manifest_event)
        return rd_manifest_check(e);
    int rc = m->plan ? rd_plan_check(m->plan, e->payload, e->payload_size)
                     : mantra_decode_payload(m->fields, m->field_count, e->payload, e->payload_size, e->pointer_size, NULL, NULL);
    return rc == 0 ? MANTRA_DECODE_OK : rc == 1 ? MANTRA_DECODE_TRAILING : MANTRA_DECODE_SHORT;
}

/* field_plan.c's way into the walker for one top-level field (field_plan-internal.h). */
int rd_decode_one_field(const mantra_field_desc *f, const uint8_t *payload, size_t size, size_t *pos,
                        const mantra_field_visitor *visitor, void *ctx) {
    mantra_cursor cur = {payload, size, *pos, 0};
    dc c = {cur, visitor ? visitor : &null_visitor, ctx, 0};
    int rc = decode_one(&c, f, f->name, 0);
    *pos = c.cur.pos;
    return rc;
}

int mantra_decode_event(const mantra_trace_event *ev, const mantra_field_visitor *visitor, void *ctx) {
    if (ev == NULL || ev->metadata == NULL)
        return MANTRA_EINVAL;
    if (ev->metadata->fields_from_manifest && ev->metadata->manifest_event)
        return rd_manifest_decode(ev, visitor, ctx);
    if (ev->metadata->plan) /* the metadata's fields, precompiled (field_plan.c) */
        return rd_plan_decode(ev->metadata->plan, ev->payload, ev->payload_size, visitor, ctx);
    return mantra_decode_payload(ev->metadata->fields, ev->metadata->field_count, ev->payload, ev->payload_size,
                                 ev->pointer_size, visitor, ctx);
}
