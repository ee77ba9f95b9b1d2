/* Payload decoding driven by a loaded manifest's template: a visitor sees every value in order. */
#include <string.h>

#include "manifest/manifest-internal.h"

typedef struct dstate {
    mantra_cursor c;
    mantra_manifest_visit_fn visit;
    void *ctx;
    unsigned mute; /* > 0: inside a skipped array or struct (decode, do not call) */
    const mantra_manifest_field *failed;
    char map_text[512];
} dstate;

#define STOPPED MANTRA_MANIFEST_DECODE_STOPPED

/* Calls the visitor (unless muted). Returns 0, 1 (skip) or STOPPED. */
static int call(dstate *d, mantra_manifest_value *v) {
    if (d->mute > 0 || d->visit == NULL)
        return 0;
    int r = d->visit(d->ctx, v);
    if (r == MANTRA_MANIFEST_VISIT_SKIP)
        return 1;
    if (r != MANTRA_MANIFEST_VISIT_CONTINUE)
        return STOPPED;
    return 0;
}

static size_t elem_size(const mantra_manifest_field *f, unsigned pointer_size) {
    return f->type == MANTRA_TYPE_POINTER ? pointer_size : f->size;
}

/* Reads one fixed-size scalar of f's type into v (SCALAR); *raw gets the unsigned bits. */
static int read_scalar(dstate *d, const mantra_manifest_field *f, mantra_manifest_value *v, uint64_t *raw) {
    mantra_cursor *c = &d->c;
    v->offset = c->pos;
    switch (f->type) {
    case MANTRA_TYPE_SBYTE:
    case MANTRA_TYPE_BYTE: {
        uint8_t x;
        MANTRA_TRY(mantra_cursor_u8(c, &x));
        *raw = x;
        if (f->type == MANTRA_TYPE_SBYTE)
            v->v.i = (int8_t)x;
        else
            v->v.u = x;
        break;
    }
    case MANTRA_TYPE_INT16:
    case MANTRA_TYPE_UINT16: {
        uint16_t x;
        MANTRA_TRY(mantra_cursor_u16(c, &x));
        *raw = x;
        if (f->type == MANTRA_TYPE_INT16)
            v->v.i = (int16_t)x;
        else
            v->v.u = x;
        break;
    }
    case MANTRA_TYPE_INT32:
    case MANTRA_TYPE_UINT32:
    case MANTRA_TYPE_BOOLEAN: {
        uint32_t x;
        MANTRA_TRY(mantra_cursor_u32(c, &x));
        *raw = x;
        if (f->type == MANTRA_TYPE_INT32)
            v->v.i = (int32_t)x;
        else
            v->v.u = x;
        break;
    }
    case MANTRA_TYPE_INT64:
    case MANTRA_TYPE_UINT64:
    case MANTRA_TYPE_DATETIME: {
        uint64_t x;
        MANTRA_TRY(mantra_cursor_u64(c, &x));
        *raw = x;
        if (f->type == MANTRA_TYPE_INT64)
            v->v.i = (int64_t)x;
        else
            v->v.u = x;
        break;
    }
    case MANTRA_TYPE_POINTER: {
        uint64_t x;
        MANTRA_TRY(mantra_cursor_pointer(c, &x));
        *raw = x;
        v->v.u = x;
        break;
    }
    case MANTRA_TYPE_SINGLE: {
        float x;
        MANTRA_TRY(mantra_cursor_f32(c, &x));
        *raw = 0;
        v->v.f = (double)x;
        break;
    }
    case MANTRA_TYPE_DOUBLE: {
        double x;
        MANTRA_TRY(mantra_cursor_f64(c, &x));
        *raw = 0;
        v->v.f = x;
        break;
    }
    case MANTRA_TYPE_GUID:
        MANTRA_TRY(mantra_cursor_guid(c, &v->v.guid));
        *raw = 0;
        break;
    default:
        return MANTRA_DECODE_SHORT; /* never: the loader admits only these types as scalars */
    }
    v->size = c->pos - v->offset;
    v->map_text = NULL;
    if (f->map != NULL && d->mute == 0 &&
        mantra_manifest_map_format(f->map, *raw, d->map_text, sizeof d->map_text) > 0)
        v->map_text = d->map_text;
    return MANTRA_DECODE_OK;
}

static void value_init(mantra_manifest_value *v, int kind, const mantra_manifest_field *f, unsigned depth) {
    memset(v, 0, sizeof *v);
    v->kind = kind;
    v->type = f->type;
    v->field = f;
    v->depth = depth;
}

/* Fields list[0..n) at the cursor; slots: values of the fields others take counts/lengths from. */
static int decode_fields(dstate *d, const mantra_manifest_field *list, uint32_t n, unsigned depth) {
    uint64_t slots[MANTRA_MANIFEST_MAX_SLOTS];
    mantra_manifest_value v;
    for (uint32_t i = 0; i < n; i++) {
        const mantra_manifest_field *f = &list[i];
        uint64_t count = 1;
        if (f->count_kind == MANTRA_MANIFEST_REF_FIXED)
            count = f->count;
        else if (f->count_kind == MANTRA_MANIFEST_REF_FIELD)
            count = slots[list[f->count].slot];
        d->failed = f;
        int r;
        if (f->type == MANTRA_TYPE_OBJECT) {
            value_init(&v, MANTRA_MANIFEST_VALUE_STRUCT_BEGIN, f, depth);
            v.count = count;
            v.offset = d->c.pos;
            r = call(d, &v);
            if (r == STOPPED)
                return STOPPED;
            size_t start = d->c.pos;
            d->mute += (unsigned)r;
            for (uint64_t e = 0; e < count; e++) {
                size_t before = d->c.pos;
                value_init(&v, MANTRA_MANIFEST_VALUE_ELEMENT_BEGIN, f, depth);
                v.index = e;
                v.offset = before;
                if (call(d, &v) == STOPPED)
                    return STOPPED;
                int rc = decode_fields(d, f->members, f->member_count, depth + 1);
                if (rc != MANTRA_DECODE_OK)
                    return rc;
                value_init(&v, MANTRA_MANIFEST_VALUE_ELEMENT_END, f, depth);
                v.index = e;
                v.offset = before;
                v.size = d->c.pos - before;
                if (call(d, &v) == STOPPED)
                    return STOPPED;
                if (d->c.pos == before)
                    break; /* zero-sized elements: nothing more to walk */
            }
            d->mute -= (unsigned)r;
            d->failed = f;
            value_init(&v, MANTRA_MANIFEST_VALUE_STRUCT_END, f, depth);
            v.count = count;
            v.offset = start;
            v.size = d->c.pos - start;
            if (call(d, &v) == STOPPED)
                return STOPPED;
            continue;
        }
        if (f->type == MANTRA_TYPE_STRING || f->type == MANTRA_TYPE_STRING8) {
            value_init(&v, f->type == MANTRA_TYPE_STRING8 ? MANTRA_MANIFEST_VALUE_STRING8
                                                                       : MANTRA_MANIFEST_VALUE_STRING16,
                       f, depth);
            v.offset = d->c.pos;
            r = f->type == MANTRA_TYPE_STRING8 ? mantra_cursor_str8(&d->c, &v.v.str8)
                                                            : mantra_cursor_str16(&d->c, &v.v.str16);
            if (r < 0)
                return r;
            v.size = d->c.pos - v.offset;
            if (call(d, &v) == STOPPED)
                return STOPPED;
            continue;
        }
        if (f->type == MANTRA_TYPE_BINARY) {
            uint64_t length = f->length_kind == MANTRA_MANIFEST_REF_FIELD ? slots[list[f->length].slot] : f->length;
            mantra_array a;
            value_init(&v, MANTRA_MANIFEST_VALUE_BINARY, f, depth);
            v.offset = d->c.pos;
            MANTRA_TRY(mantra_cursor_array(&d->c, length, 1, &a));
            v.v.bytes.data = a.data;
            v.v.bytes.size = a.count;
            v.v.bytes.count = a.count;
            v.size = a.count;
            if (call(d, &v) == STOPPED)
                return STOPPED;
            continue;
        }
        uint64_t raw = 0;
        if (f->count_kind == MANTRA_MANIFEST_REF_NONE) {
            value_init(&v, MANTRA_MANIFEST_VALUE_SCALAR, f, depth);
            MANTRA_TRY(read_scalar(d, f, &v, &raw));
            if (f->slot != MANTRA_MANIFEST_NO_SLOT)
                slots[f->slot] = raw;
            if (call(d, &v) == STOPPED)
                return STOPPED;
            continue;
        }
        /* an array of scalars: its bytes must be there before any element is shown */
        size_t es = elem_size(f, d->c.pointer_size);
        mantra_array a;
        value_init(&v, MANTRA_MANIFEST_VALUE_ARRAY_BEGIN, f, depth);
        v.offset = d->c.pos;
        MANTRA_TRY(mantra_cursor_array(&d->c, count, es, &a));
        v.count = count;
        v.size = d->c.pos - v.offset;
        v.v.array = a;
        r = call(d, &v);
        if (r == STOPPED)
            return STOPPED;
        if (r == 0 && d->mute == 0 && d->visit != NULL) {
            mantra_cursor sub = {a.data, (size_t)count * es, 0, d->c.pointer_size};
            mantra_cursor saved = d->c;
            d->c = sub;
            for (uint64_t e = 0; e < count; e++) {
                value_init(&v, MANTRA_MANIFEST_VALUE_SCALAR, f, depth);
                v.flags = MANTRA_MANIFEST_VALUE_ELEMENT;
                v.index = e;
                if (read_scalar(d, f, &v, &raw) != MANTRA_DECODE_OK)
                    break; /* cannot happen: the bytes were checked */
                v.offset += saved.pos - (size_t)count * es;
                if (call(d, &v) == STOPPED) {
                    d->c = saved;
                    return STOPPED;
                }
            }
            d->c = saved;
        }
        value_init(&v, MANTRA_MANIFEST_VALUE_ARRAY_END, f, depth);
        v.count = count;
        v.offset = d->c.pos - (size_t)count * es;
        v.size = (size_t)count * es;
        if (call(d, &v) == STOPPED)
            return STOPPED;
    }
    return MANTRA_DECODE_OK;
}

int mantra_manifest_decode(const mantra_manifest_template *tpl, const uint8_t *payload, size_t size,
                           unsigned pointer_size, mantra_manifest_visit_fn visit, void *ctx,
                           mantra_manifest_decode_info *info) {
    dstate d;
    d.c.data = payload != NULL ? payload : (const uint8_t *)"";
    d.c.size = payload != NULL ? size : 0;
    d.c.pos = 0;
    d.c.pointer_size = pointer_size == 4 ? 4u : 8u;
    d.visit = visit;
    d.ctx = ctx;
    d.mute = 0;
    d.failed = NULL;
    int rc = MANTRA_DECODE_OK;
    if (tpl != NULL)
        rc = decode_fields(&d, tpl->fields, tpl->field_count, 0);
    if (rc == MANTRA_DECODE_OK)
        rc = mantra_cursor_finish(&d.c);
    if (info != NULL) {
        info->consumed = d.c.pos;
        info->field = rc < 0 ? d.failed : NULL;
    }
    return rc;
}
