/* Metadata-driven payload decoding (nettrace-format.md §5.6, §8.6) through a visitor. */
#include <string.h>

#include "mantra/decode.h"
#include "common/varint-internal.h"
#include "reader-internal.h"

typedef struct dc {
    const uint8_t *p;
    size_t n;
    size_t pos;
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

static int decode_one(dc *c, const mantra_field_desc *f, const char *name);

static int decode_elements(dc *c, const mantra_field_desc *f, const mantra_field_desc *elem, size_t count,
                           mantra_value *av) {
    int rc = call(c->v->begin_array, c->ctx, av);
    if (rc < 0)
        return rc;
    const mantra_field_visitor *saved = c->v;
    if (rc == 1)
        c->v = &null_visitor;
    for (size_t i = 0; i < count; i++) {
        rc = decode_one(c, elem, "");
        if (rc < 0) {
            c->v = saved;
            return rc;
        }
    }
    c->v = saved;
    av->size = c->pos - (size_t)(av->data - c->p);
    (void)f;
    return call(c->v->end_array, c->ctx, av);
}

static int decode_located(dc *c, const mantra_field_desc *f, const char *name) {
    /* RelLoc / DataLoc: uint32 = size << 16 | offset; fixed-size elements at the location. */
    if (c->n - c->pos < 4 || f->element == NULL)
        return MANTRA_EFORMAT;
    uint32_t loc = mantra_load_u32(c->p + c->pos);
    c->pos += 4;
    size_t size = loc >> 16, off = loc & 0xFFFF;
    size_t base = f->type == MANTRA_TYPE_RELLOC ? c->pos : 0;
    size_t esize = fixed_size(f->element, 0);
    if (esize == 0 || base + off > c->n || size > c->n - (base + off) || size % esize != 0)
        return MANTRA_EFORMAT;
    dc sub = *c;
    sub.n = base + off + size;
    sub.pos = base + off;
    mantra_value av;
    memset(&av, 0, sizeof av);
    av.field = f;
    av.name = name;
    av.type = f->type;
    av.data = c->p + base + off;
    av.size = size;
    av.count = size / esize;
    sub.depth = c->depth + 1;
    return decode_elements(&sub, f, f->element, av.count, &av);
}

static int decode_one(dc *c, const mantra_field_desc *f, const char *name) {
    mantra_value v;
    memset(&v, 0, sizeof v);
    v.field = f;
    v.name = name;
    v.type = f->type;
    size_t left = c->n - c->pos;
    const uint8_t *p = c->p + c->pos;
    if (c->depth > 64)
        return MANTRA_EFORMAT;
    switch (f->type) {
    case MANTRA_TYPE_BOOLEAN:
    case MANTRA_TYPE_INT32:
    case MANTRA_TYPE_UINT32:
        if (left < 4)
            return MANTRA_EFORMAT;
        v.u = mantra_load_u32(p);
        v.i = (int32_t)(uint32_t)v.u;
        c->pos += 4;
        break;
    case MANTRA_TYPE_CHAR:
    case MANTRA_TYPE_INT16:
    case MANTRA_TYPE_UINT16:
        if (left < 2)
            return MANTRA_EFORMAT;
        v.u = mantra_load_u16(p);
        v.i = (int16_t)(uint16_t)v.u;
        c->pos += 2;
        break;
    case MANTRA_TYPE_SBYTE:
    case MANTRA_TYPE_BYTE:
    case MANTRA_TYPE_UTF8_CODE_UNIT:
    case MANTRA_TYPE_BOOLEAN8:
        if (left < 1)
            return MANTRA_EFORMAT;
        v.u = p[0];
        v.i = (int8_t)p[0];
        c->pos += 1;
        break;
    case MANTRA_TYPE_INT64:
    case MANTRA_TYPE_UINT64:
    case MANTRA_TYPE_DATETIME:
        if (left < 8)
            return MANTRA_EFORMAT;
        v.u = mantra_load_u64(p);
        v.i = (int64_t)v.u;
        c->pos += 8;
        break;
    case MANTRA_TYPE_SINGLE: {
        float x;
        if (left < 4)
            return MANTRA_EFORMAT;
        memcpy(&x, p, 4);
        v.d = x;
        c->pos += 4;
        break;
    }
    case MANTRA_TYPE_DOUBLE:
        if (left < 8)
            return MANTRA_EFORMAT;
        memcpy(&v.d, p, 8);
        c->pos += 8;
        break;
    case MANTRA_TYPE_DECIMAL:
        if (left < 16)
            return MANTRA_EFORMAT;
        v.data = p;
        v.size = 16;
        c->pos += 16;
        break;
    case MANTRA_TYPE_GUID:
        if (left < 16)
            return MANTRA_EFORMAT;
        v.guid.data1 = mantra_load_u32(p);
        v.guid.data2 = mantra_load_u16(p + 4);
        v.guid.data3 = mantra_load_u16(p + 6);
        memcpy(v.guid.data4, p + 8, 8);
        v.data = p;
        v.size = 16;
        c->pos += 16;
        break;
    case MANTRA_TYPE_STRING: {
        size_t i = 0;
        for (;;) {
            if (left - i < 2)
                return MANTRA_EFORMAT;
            if (p[i] == 0 && p[i + 1] == 0)
                break;
            i += 2;
        }
        v.data = p;
        v.size = i;
        v.count = i / 2;
        c->pos += i + 2;
        break;
    }
    case MANTRA_TYPE_VARINT:
    case MANTRA_TYPE_VARUINT: {
        uint64_t u;
        size_t k = mantra_varint_get(p, left, MANTRA_VARINT64_MAX_BYTES, &u);
        if (k == 0)
            return MANTRA_EFORMAT;
        v.u = u;
        v.i = f->type == MANTRA_TYPE_VARINT ? mantra_zigzag_decode(u) : (int64_t)u;
        c->pos += k;
        break;
    }
    case MANTRA_TYPE_ARRAY:
    case MANTRA_TYPE_FIXED_ARRAY: {
        size_t count;
        if (f->element == NULL)
            return MANTRA_EFORMAT;
        if (f->type == MANTRA_TYPE_ARRAY) {
            if (left < 2)
                return MANTRA_EFORMAT;
            count = mantra_load_u16(p);
            c->pos += 2;
        } else {
            count = f->fixed_count;
        }
        size_t es = fixed_size(f->element, 0);
        if (es && count > (c->n - c->pos) / es)
            return MANTRA_EFORMAT;
        v.data = c->p + c->pos;
        v.size = es * count;
        v.count = count;
        c->depth++;
        int rc = decode_elements(c, f, f->element, count, &v);
        c->depth--;
        return rc;
    }
    case MANTRA_TYPE_RELLOC:
    case MANTRA_TYPE_DATALOC:
        return decode_located(c, f, name);
    case MANTRA_TYPE_OBJECT: {
        v.count = f->field_count;
        v.data = p;
        int rc = call(c->v->begin_object, c->ctx, &v);
        if (rc < 0)
            return rc;
        c->depth++;
        for (uint32_t i = 0; i < f->field_count; i++) {
            rc = decode_one(c, &f->fields[i], f->fields[i].name);
            if (rc < 0) {
                c->depth--;
                return rc;
            }
        }
        c->depth--;
        v.size = (size_t)(c->p + c->pos - p);
        return call(c->v->end_object, c->ctx, &v);
    }
    default:
        return MANTRA_EFORMAT;
    }
    return call(c->v->scalar, c->ctx, &v);
}

int mantra_decode_payload(const mantra_field_desc *fields, uint32_t count, const uint8_t *payload, size_t size,
                          uint32_t pointer_size, const mantra_field_visitor *visitor, void *ctx) {
    (void)pointer_size; /* metadata names Int32/Int64 explicitly for pointer-sized fields */
    static const uint8_t empty[1];
    dc c = {payload ? payload : empty, payload ? size : 0, 0, visitor ? visitor : &null_visitor, ctx, 0};
    for (uint32_t i = 0; i < count; i++) {
        int rc = decode_one(&c, &fields[i], fields[i].name);
        if (rc < 0)
            return rc;
    }
    return c.pos < c.n ? 1 : 0;
}

int mantra_decode_event(const mantra_trace_event *ev, const mantra_field_visitor *visitor, void *ctx) {
    if (ev == NULL || ev->metadata == NULL)
        return MANTRA_EINVAL;
    if (ev->metadata->fields_from_manifest && ev->metadata->manifest_event)
        return rd_manifest_decode(ev, visitor, ctx);
    return mantra_decode_payload(ev->metadata->fields, ev->metadata->field_count, ev->payload, ev->payload_size,
                                 ev->pointer_size, visitor, ctx);
}

const char *mantra_type_name(uint32_t type) {
    static const char *const names[] = {"Empty",   "Object",  "DBNull",  "Boolean",        "Char",
                                        "SByte",   "Byte",    "Int16",   "UInt16",         "Int32",
                                        "UInt32",  "Int64",   "UInt64",  "Single",         "Double",
                                        "Decimal", "DateTime", "Guid",   "String",         "Array",
                                        "VarInt",  "VarUInt", "FixedLengthArray", "UTF8CodeUnit", "RelLoc",
                                        "DataLoc", "Boolean8"};
    return type < sizeof names / sizeof names[0] ? names[type] : "?";
}
