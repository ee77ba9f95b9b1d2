/* Payload decoding driven by a loaded manifest's template: every value is shown, in order, to a
 * mantra_field_visitor (mantra/visit.h), in the shapes the trace decoders show. */
#include <stdint.h>
#include <string.h>

#include "manifest/decode-internal.h"
#include "manifest/manifest-internal.h"

typedef struct dstate {
    mantra_cursor c;
    const mantra_field_visitor *vis;
    void *ctx;
    unsigned mute;  /* > 0: inside a skipped array (decode, do not call) */
    int stopped;    /* the negative result of the callback that stopped the walk, or 0 */
    const mantra_manifest_field *failed;
    char map_text[512];
} dstate;

/* decode_fields' result when a callback stopped the walk (d->stopped says with what). */
#define STOPPED 2

typedef int (*visit_fn)(void *ctx, const mantra_value *v);

/* Calls fn (unless muted). Returns 0, 1 (begin_array: skip the elements) or STOPPED. */
static int call(dstate *d, visit_fn fn, const mantra_value *v) {
    if (d->mute > 0 || fn == NULL)
        return 0;
    int r = fn(d->ctx, v);
    if (r < 0) {
        d->stopped = r;
        return STOPPED;
    }
    return r == 1 ? 1 : 0;
}

static size_t elem_size(const mantra_manifest_field *f, unsigned pointer_size) {
    return f->type == MANTRA_TYPE_POINTER ? pointer_size : f->size;
}

/* The type a trace shows for one value of f's type: Pointer is an unsigned integer of the
 * trace's pointer size, every other scalar and string type is its own code. */
static uint32_t scalar_type(const mantra_manifest_field *f, unsigned pointer_size) {
    if (f->type == MANTRA_TYPE_POINTER)
        return pointer_size == 4 ? MANTRA_TYPE_UINT32 : MANTRA_TYPE_UINT64;
    return f->type;
}

static void value_init(mantra_value *v, const mantra_manifest_field *f, const mantra_field_desc *desc,
                       unsigned depth, uint32_t type, size_t offset) {
    memset(v, 0, sizeof *v);
    v->field = desc;
    v->manifest_field = f;
    v->name = f->name;
    v->type = type;
    v->depth = depth;
    v->offset = offset;
}

/* An element of f's array (name "", its index) at the cursor. */
static void element_init(mantra_value *v, const mantra_manifest_field *f, const mantra_field_desc *desc,
                         unsigned depth, uint32_t type, size_t offset, uint64_t index) {
    value_init(v, f, desc != NULL ? desc->element : NULL, depth, type, offset);
    v->name = "";
    v->index = index;
}

/* Reads one fixed-size scalar of f's type into v; *raw gets the unsigned bits (for maps). */
static int read_scalar(dstate *d, const mantra_manifest_field *f, mantra_value *v, uint64_t *raw) {
    mantra_cursor *c = &d->c;
    size_t start = c->pos;
    *raw = 0;
    switch (f->type) {
    case MANTRA_TYPE_SBYTE:
    case MANTRA_TYPE_BYTE: {
        uint8_t x;
        MANTRA_TRY(mantra_cursor_u8(c, &x));
        *raw = x;
        v->i = f->type == MANTRA_TYPE_SBYTE ? (int8_t)x : (int64_t)x;
        break;
    }
    case MANTRA_TYPE_INT16:
    case MANTRA_TYPE_UINT16: {
        uint16_t x;
        MANTRA_TRY(mantra_cursor_u16(c, &x));
        *raw = x;
        v->i = f->type == MANTRA_TYPE_INT16 ? (int16_t)x : (int64_t)x;
        break;
    }
    case MANTRA_TYPE_INT32:
    case MANTRA_TYPE_UINT32:
    case MANTRA_TYPE_BOOLEAN: {
        uint32_t x;
        MANTRA_TRY(mantra_cursor_u32(c, &x));
        *raw = x;
        v->i = f->type == MANTRA_TYPE_INT32 ? (int32_t)x : (int64_t)x;
        break;
    }
    case MANTRA_TYPE_INT64:
    case MANTRA_TYPE_UINT64:
    case MANTRA_TYPE_DATETIME:
        MANTRA_TRY(mantra_cursor_u64(c, raw));
        v->i = (int64_t)*raw;
        break;
    case MANTRA_TYPE_POINTER:
        MANTRA_TRY(mantra_cursor_pointer(c, raw));
        v->i = (int64_t)*raw;
        break;
    case MANTRA_TYPE_SINGLE: {
        float x;
        MANTRA_TRY(mantra_cursor_f32(c, &x));
        v->d = (double)x;
        break;
    }
    case MANTRA_TYPE_DOUBLE:
        MANTRA_TRY(mantra_cursor_f64(c, &v->d));
        break;
    case MANTRA_TYPE_GUID:
        MANTRA_TRY(mantra_cursor_guid(c, &v->guid));
        break;
    default:
        return MANTRA_DECODE_SHORT; /* never: the loader admits only these types as scalars */
    }
    v->u = *raw; /* integers: their bits, zero-extended (0 for floats and GUIDs) */
    v->data = c->data + start;
    v->size = c->pos - start;
    v->map_text = NULL;
    if (f->map != NULL && d->mute == 0 &&
        mantra_manifest_map_format(f->map, *raw, d->map_text, sizeof d->map_text) > 0)
        v->map_text = d->map_text;
    return MANTRA_DECODE_OK;
}

/* decode_fields' c_start when the fields are not the members of a C-layout struct's element. */
#define NOT_C_LAYOUT SIZE_MAX

static int decode_fields(dstate *d, const mantra_manifest_field *list, const mantra_field_desc *descs, uint32_t n,
                         unsigned depth, size_t c_start);

/* A member's alignment in a C-layout struct: its element's size (GUID 4, the alignment of its first
 * member; Pointer the trace's pointer size). */
size_t mf_c_align(const mantra_manifest_field *m, unsigned pointer_size) {
    if (m->type == MANTRA_TYPE_GUID)
        return 4;
    size_t a = elem_size(m, pointer_size);
    return a ? a : 1;
}

size_t mf_c_element_size(const mantra_manifest_field *f, unsigned pointer_size) {
    size_t end = 0, largest = 1;
    for (uint32_t i = 0; i < f->member_count; i++) {
        const mantra_manifest_field *m = &f->members[i];
        size_t align = mf_c_align(m, pointer_size);
        size_t n = m->count_kind == MANTRA_MANIFEST_REF_FIXED ? m->count : 1;
        largest = align > largest ? align : largest;
        end = (end + align - 1) / align * align + n * elem_size(m, pointer_size);
    }
    return (end + largest - 1) / largest * largest;
}

/* A struct: an array (count elements) of objects whose members are f's members. */
static int decode_struct(dstate *d, const mantra_manifest_field *f, const mantra_field_desc *desc, uint64_t count,
                         unsigned depth) {
    uint32_t type = f->count_kind == MANTRA_MANIFEST_REF_FIELD ? MANTRA_TYPE_ARRAY : MANTRA_TYPE_FIXED_ARRAY;
    size_t start = d->c.pos;
    mantra_value v;
    value_init(&v, f, desc, depth, type, start);
    v.count = (size_t)count;
    v.data = d->c.data + start;
    int r = call(d, d->vis->begin_array, &v);
    if (r == STOPPED)
        return STOPPED;
    d->mute += (unsigned)r;
    for (uint64_t e = 0; e < count; e++) {
        size_t before = d->c.pos;
        mantra_value o;
        element_init(&o, f, desc, depth + 1, MANTRA_TYPE_OBJECT, before, e);
        o.count = f->member_count;
        o.data = d->c.data + before;
        if (call(d, d->vis->begin_object, &o) == STOPPED)
            return STOPPED;
        int rc = decode_fields(d, f->members, o.field != NULL ? o.field->fields : NULL, f->member_count, depth + 2,
                               f->layout == MANTRA_MANIFEST_LAYOUT_C ? before : NOT_C_LAYOUT);
        if (rc != MANTRA_DECODE_OK)
            return rc;
        o.size = d->c.pos - before;
        if (call(d, d->vis->end_object, &o) == STOPPED)
            return STOPPED;
        if (d->c.pos == before)
            break; /* zero-sized elements: nothing more to walk */
    }
    d->mute -= (unsigned)r;
    d->failed = f;
    v.size = d->c.pos - start;
    return call(d, d->vis->end_array, &v) == STOPPED ? STOPPED : MANTRA_DECODE_OK;
}

/* count elements of es bytes each (Binary: Bytes; else scalars of f's type), already checked. */
static int decode_array(dstate *d, const mantra_manifest_field *f, const mantra_field_desc *desc, uint64_t count,
                        size_t es, unsigned depth, int fixed) {
    size_t start = d->c.pos;
    mantra_array a;
    MANTRA_TRY(mantra_cursor_array(&d->c, count, es, &a));
    mantra_value v;
    value_init(&v, f, desc, depth, fixed ? MANTRA_TYPE_FIXED_ARRAY : MANTRA_TYPE_ARRAY, start);
    v.count = (size_t)count;
    v.data = a.data;
    v.size = (size_t)count * es;
    int r = call(d, d->vis->begin_array, &v);
    if (r == STOPPED)
        return STOPPED;
    if (r == 0 && d->mute == 0 && d->vis->scalar != NULL) {
        int binary = f->type == MANTRA_TYPE_BINARY;
        uint32_t etype = binary ? MANTRA_TYPE_BYTE : scalar_type(f, d->c.pointer_size);
        mantra_cursor saved = d->c;
        d->c = (mantra_cursor){a.data, (size_t)count * es, 0, saved.pointer_size};
        for (uint64_t e = 0; e < count; e++) {
            mantra_value x;
            element_init(&x, f, desc, depth + 1, etype, start + d->c.pos, e);
            if (binary) {
                x.data = a.data + e;
                x.size = 1;
                x.u = a.data[e];
                x.i = a.data[e];
                d->c.pos++;
            } else {
                uint64_t raw;
                if (read_scalar(d, f, &x, &raw) != MANTRA_DECODE_OK)
                    break; /* cannot happen: the bytes were checked */
            }
            if (call(d, d->vis->scalar, &x) == STOPPED) {
                d->c = saved;
                return STOPPED;
            }
        }
        d->c = saved;
    }
    return call(d, d->vis->end_array, &v) == STOPPED ? STOPPED : MANTRA_DECODE_OK;
}

/* Fields list[0..n) at the cursor; slots: values of the fields others take counts/lengths from.
 * c_start: NOT_C_LAYOUT, or where an element of a C-layout struct starts: each of its members (fixed
 * sizes, the loader checks) at its natural alignment from there, then the padding to the largest. */
static int decode_fields(dstate *d, const mantra_manifest_field *list, const mantra_field_desc *descs, uint32_t n,
                         unsigned depth, size_t c_start) {
    uint64_t slots[MANTRA_MANIFEST_MAX_SLOTS];
    size_t largest = 1;
    for (uint32_t i = 0; i < n; i++) {
        const mantra_field_desc *desc = descs != NULL ? &descs[i] : NULL;
        const mantra_manifest_field *f = &list[i];
        if (c_start != NOT_C_LAYOUT) {
            size_t align = mf_c_align(f, d->c.pointer_size);
            largest = align > largest ? align : largest;
            d->failed = f;
            MANTRA_TRY(mantra_cursor_align(&d->c, c_start, align));
        }
        uint64_t count = 1;
        if (f->count_kind == MANTRA_MANIFEST_REF_FIXED)
            count = f->count;
        else if (f->count_kind == MANTRA_MANIFEST_REF_FIELD)
            count = slots[list[f->count].slot];
        d->failed = f;
        int rc;
        if (f->type == MANTRA_TYPE_OBJECT) {
            rc = decode_struct(d, f, desc, count, depth);
        } else if (f->type == MANTRA_TYPE_BINARY) {
            uint64_t length = f->length_kind == MANTRA_MANIFEST_REF_FIELD ? slots[list[f->length].slot] : f->length;
            rc = decode_array(d, f, desc, length, 1, depth, f->length_kind == MANTRA_MANIFEST_REF_FIXED);
        } else if (f->count_kind != MANTRA_MANIFEST_REF_NONE) {
            rc = decode_array(d, f, desc, count, elem_size(f, d->c.pointer_size), depth,
                              f->count_kind == MANTRA_MANIFEST_REF_FIXED);
        } else if (f->type == MANTRA_TYPE_STRING || f->type == MANTRA_TYPE_STRING8) {
            mantra_value v;
            value_init(&v, f, desc, depth, f->type, d->c.pos);
            if (f->type == MANTRA_TYPE_STRING8) {
                mantra_str8 s;
                MANTRA_TRY(mantra_cursor_str8(&d->c, &s));
                v.data = (const uint8_t *)s.data;
                v.size = v.count = s.len;
            } else {
                mantra_str16 s;
                MANTRA_TRY(mantra_cursor_str16(&d->c, &s));
                v.data = s.data;
                v.count = s.units;
                v.size = s.units * 2;
            }
            rc = call(d, d->vis->scalar, &v) == STOPPED ? STOPPED : MANTRA_DECODE_OK;
        } else {
            mantra_value v;
            uint64_t raw;
            value_init(&v, f, desc, depth, scalar_type(f, d->c.pointer_size), d->c.pos);
            MANTRA_TRY(read_scalar(d, f, &v, &raw));
            if (f->slot != MANTRA_MANIFEST_NO_SLOT)
                slots[f->slot] = raw;
            rc = call(d, d->vis->scalar, &v) == STOPPED ? STOPPED : MANTRA_DECODE_OK;
        }
        if (rc != MANTRA_DECODE_OK)
            return rc;
    }
    return c_start != NOT_C_LAYOUT ? mantra_cursor_align(&d->c, c_start, largest) : MANTRA_DECODE_OK;
}

int mf_decode_described(const mantra_manifest_template *tpl, const mantra_field_desc *descs, const uint8_t *payload,
                        size_t size, unsigned pointer_size, const mantra_field_visitor *visitor, void *ctx,
                        mantra_manifest_decode_info *info) {
    static const mantra_field_visitor none = {0};
    dstate d;
    d.c.data = payload != NULL ? payload : (const uint8_t *)"";
    d.c.size = payload != NULL ? size : 0;
    d.c.pos = 0;
    d.c.pointer_size = pointer_size == 4 ? 4u : 8u;
    d.vis = visitor != NULL ? visitor : &none;
    d.ctx = ctx;
    d.mute = 0;
    d.stopped = 0;
    d.failed = NULL;
    int rc = MANTRA_DECODE_OK;
    if (tpl != NULL)
        rc = decode_fields(&d, tpl->fields, descs, tpl->field_count, 0, NOT_C_LAYOUT);
    if (rc == MANTRA_DECODE_OK)
        rc = mantra_cursor_finish(&d.c);
    if (info != NULL) {
        info->consumed = d.c.pos;
        info->field = rc < 0 ? d.failed : NULL;
        info->stopped = rc == STOPPED;
    }
    return rc == STOPPED ? d.stopped : rc;
}

int mantra_manifest_decode(const mantra_manifest_template *tpl, const uint8_t *payload, size_t size,
                           unsigned pointer_size, const mantra_field_visitor *visitor, void *ctx,
                           mantra_manifest_decode_info *info) {
    return mf_decode_described(tpl, NULL, payload, size, pointer_size, visitor, ctx, info);
}
