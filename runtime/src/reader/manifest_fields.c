/* Events decoded with a manifest loaded at run time (mantra_reader_add_manifest): the field
 * descriptions shown for a manifest template, and the manifest decoder (mantra/manifest.h) seen
 * through the reader's value visitor (mantra_field_visitor). */
#include <string.h>

#include "mantra/decode.h"
#include "mantra/manifest.h"
#include "reader-internal.h"

/* ---- descriptions ------------------------------------------------------------------------ */

/* A manifest scalar's type as a trace field: the same code (manifests and traces share enum
 * mantra_type), except Pointer, which is an unsigned integer of the trace's pointer size. */
static uint32_t scalar_type(int type, uint32_t pointer_size) {
    if (type == MANTRA_TYPE_POINTER)
        return pointer_size == 4 ? MANTRA_TYPE_UINT32 : MANTRA_TYPE_UINT64;
    if (type == MANTRA_TYPE_BINARY || type == MANTRA_TYPE_OBJECT)
        return MANTRA_TYPE_EMPTY; /* not scalars: fill_field makes arrays of them */
    return (uint32_t)type;
}

/* An element description (of a scalar array, a Binary or a struct). */
static mantra_field_desc *new_desc(cm_arena *a, uint32_t type) {
    mantra_field_desc *d = cm_arena_alloc(a, sizeof *d);
    if (d) {
        d->name = "";
        d->type = type;
    }
    return d;
}

static int fill_fields(cm_arena *a, const mantra_manifest_field *src, uint32_t n, uint32_t pointer_size,
                       mantra_field_desc **out);

/* One field: scalars as themselves; a count makes an Array (count from a field) or a
 * FixedLengthArray (a number) of them; Binary is an array of Byte; a struct an array of Object. */
static int fill_field(cm_arena *a, const mantra_manifest_field *f, uint32_t pointer_size, mantra_field_desc *d) {
    d->name = f->name;
    mantra_field_desc *elem = NULL;
    uint8_t kind = f->count_kind;
    uint32_t fixed = f->count;
    if (f->type == MANTRA_TYPE_BINARY) {
        elem = new_desc(a, MANTRA_TYPE_BYTE);
        kind = f->length_kind == MANTRA_MANIFEST_REF_NONE ? MANTRA_MANIFEST_REF_FIELD : f->length_kind;
        fixed = f->length;
    } else if (f->type == MANTRA_TYPE_OBJECT) {
        elem = new_desc(a, MANTRA_TYPE_OBJECT);
        if (elem == NULL)
            return MANTRA_ENOMEM;
        mantra_field_desc *members = NULL;
        if (fill_fields(a, f->members, f->member_count, pointer_size, &members) < 0)
            return MANTRA_ENOMEM;
        elem->fields = members;
        elem->field_count = f->member_count;
        if (kind == MANTRA_MANIFEST_REF_NONE) {
            kind = MANTRA_MANIFEST_REF_FIXED;
            fixed = 1;
        }
    } else if (kind == MANTRA_MANIFEST_REF_NONE) {
        d->type = scalar_type(f->type, pointer_size);
        return 0;
    } else {
        elem = new_desc(a, scalar_type(f->type, pointer_size));
    }
    if (elem == NULL)
        return MANTRA_ENOMEM;
    d->element = elem;
    if (kind == MANTRA_MANIFEST_REF_FIXED) {
        d->type = MANTRA_TYPE_FIXED_ARRAY;
        d->fixed_count = fixed;
    } else {
        d->type = MANTRA_TYPE_ARRAY;
    }
    return 0;
}

static int fill_fields(cm_arena *a, const mantra_manifest_field *src, uint32_t n, uint32_t pointer_size,
                       mantra_field_desc **out) {
    *out = NULL;
    if (n == 0)
        return 0;
    mantra_field_desc *d = cm_arena_alloc(a, n * sizeof *d);
    if (d == NULL)
        return MANTRA_ENOMEM;
    for (uint32_t i = 0; i < n; i++)
        if (fill_field(a, &src[i], pointer_size, &d[i]) < 0)
            return MANTRA_ENOMEM;
    *out = d;
    return 0;
}

int rd_manifest_fields(cm_arena *a, const mantra_manifest_event *e, uint32_t pointer_size,
                       const mantra_field_desc **fields, uint32_t *count) {
    *fields = NULL;
    *count = 0;
    if (e->tpl == NULL || e->tpl->field_count == 0)
        return 0;
    mantra_field_desc *d;
    if (fill_fields(a, e->tpl->fields, e->tpl->field_count, pointer_size, &d) < 0)
        return MANTRA_ENOMEM;
    *fields = d;
    *count = e->tpl->field_count;
    return 0;
}

/* ---- decoding through a mantra_field_visitor ------------------------------------------------- */

typedef struct adapter {
    const mantra_field_visitor *v;
    void *ctx;
    const mantra_manifest_template *tpl;
    const mantra_field_desc *fields;     /* descriptions of the template's fields */
    const mantra_manifest_field *parent; /* the struct whose element is being walked */
    const mantra_field_desc *parent_desc;
    int rc;                              /* a negative callback result that stopped the walk */
} adapter;

static const mantra_field_desc *desc_of(const adapter *ad, const mantra_manifest_value *mv) {
    if (mv->depth == 0)
        return &ad->fields[mv->field - ad->tpl->fields];
    return &ad->parent_desc->element->fields[mv->field - ad->parent->members];
}

static int fwd(adapter *ad, int (*fn)(void *, const mantra_value *), const mantra_value *v) {
    if (fn == NULL)
        return 0;
    int rc = fn(ad->ctx, v);
    if (rc < 0) {
        ad->rc = rc;
        return MANTRA_MANIFEST_VISIT_STOP;
    }
    return rc == 1 ? MANTRA_MANIFEST_VISIT_SKIP : 0;
}

static int is_signed(int type) {
    return type == MANTRA_TYPE_SBYTE || type == MANTRA_TYPE_INT16 ||
           type == MANTRA_TYPE_INT32 || type == MANTRA_TYPE_INT64;
}

static int on_value(void *ctx, const mantra_manifest_value *mv) {
    adapter *ad = ctx;
    const mantra_field_visitor *vis = ad->v;
    const mantra_field_desc *d = desc_of(ad, mv);
    mantra_value v;
    memset(&v, 0, sizeof v);
    v.field = d;
    v.name = d->name;
    v.type = d->type;
    v.map_text = mv->map_text;
    switch (mv->kind) {
    case MANTRA_MANIFEST_VALUE_SCALAR:
        if (mv->flags & MANTRA_MANIFEST_VALUE_ELEMENT) {
            v.field = d->element;
            v.name = "";
            v.type = d->element->type;
        }
        if (mv->type == MANTRA_TYPE_SINGLE || mv->type == MANTRA_TYPE_DOUBLE) {
            v.d = mv->v.f;
        } else if (mv->type == MANTRA_TYPE_GUID) {
            v.guid = mv->v.guid;
            v.size = 16;
        } else if (is_signed(mv->type)) {
            v.i = mv->v.i;
            v.u = (uint64_t)mv->v.i;
        } else {
            v.u = mv->v.u;
            v.i = (int64_t)mv->v.u;
        }
        return fwd(ad, vis->scalar, &v);
    case MANTRA_MANIFEST_VALUE_STRING16:
        v.data = mv->v.str16.data;
        v.count = mv->v.str16.units;
        v.size = v.count * 2;
        return fwd(ad, vis->scalar, &v);
    case MANTRA_MANIFEST_VALUE_STRING8:
        v.data = (const uint8_t *)mv->v.str8.data;
        v.size = v.count = mv->v.str8.len;
        return fwd(ad, vis->scalar, &v);
    case MANTRA_MANIFEST_VALUE_BINARY: {
        v.data = mv->v.bytes.data;
        v.size = v.count = mv->v.bytes.size;
        int rc = fwd(ad, vis->begin_array, &v);
        if (rc == MANTRA_MANIFEST_VISIT_STOP)
            return rc;
        if (rc == 0) {
            for (size_t i = 0; i < v.count; i++) {
                mantra_value b;
                memset(&b, 0, sizeof b);
                b.field = d->element;
                b.name = "";
                b.type = MANTRA_TYPE_BYTE;
                b.u = v.data[i];
                b.i = v.data[i];
                b.data = v.data + i;
                b.size = 1;
                if (fwd(ad, vis->scalar, &b) == MANTRA_MANIFEST_VISIT_STOP)
                    return MANTRA_MANIFEST_VISIT_STOP;
            }
        }
        return fwd(ad, vis->end_array, &v) == MANTRA_MANIFEST_VISIT_STOP ? MANTRA_MANIFEST_VISIT_STOP : 0;
    }
    case MANTRA_MANIFEST_VALUE_ARRAY_BEGIN:
    case MANTRA_MANIFEST_VALUE_STRUCT_BEGIN:
        if (mv->kind == MANTRA_MANIFEST_VALUE_ARRAY_BEGIN)
            v.data = mv->v.array.data;
        v.count = (size_t)mv->count;
        v.size = mv->size;
        if (mv->kind == MANTRA_MANIFEST_VALUE_STRUCT_BEGIN) {
            ad->parent = mv->field;
            ad->parent_desc = d;
        }
        return fwd(ad, vis->begin_array, &v);
    case MANTRA_MANIFEST_VALUE_ARRAY_END:
    case MANTRA_MANIFEST_VALUE_STRUCT_END:
        v.count = (size_t)mv->count;
        v.size = mv->size;
        return fwd(ad, vis->end_array, &v) == MANTRA_MANIFEST_VISIT_STOP ? MANTRA_MANIFEST_VISIT_STOP : 0;
    case MANTRA_MANIFEST_VALUE_ELEMENT_BEGIN:
    case MANTRA_MANIFEST_VALUE_ELEMENT_END:
        v.field = d->element;
        v.name = "";
        v.type = MANTRA_TYPE_OBJECT;
        v.count = d->element->field_count;
        v.size = mv->size;
        return fwd(ad, mv->kind == MANTRA_MANIFEST_VALUE_ELEMENT_BEGIN ? vis->begin_object : vis->end_object, &v) ==
                       MANTRA_MANIFEST_VISIT_STOP
                   ? MANTRA_MANIFEST_VISIT_STOP
                   : 0;
    default:
        return 0;
    }
}

int rd_manifest_decode(const mantra_trace_event *ev, const mantra_field_visitor *visitor, void *ctx) {
    const mantra_trace_metadata *m = ev->metadata;
    adapter ad;
    memset(&ad, 0, sizeof ad);
    ad.v = visitor;
    ad.ctx = ctx;
    ad.tpl = m->manifest_event->tpl;
    ad.fields = m->fields;
    int rc = mantra_manifest_decode(ad.tpl, ev->payload, ev->payload_size, ev->pointer_size ? ev->pointer_size : 8,
                                    visitor ? on_value : NULL, &ad, NULL);
    switch (rc) {
    case MANTRA_DECODE_OK:
        return 0;
    case MANTRA_DECODE_TRAILING:
        return 1;
    case MANTRA_MANIFEST_DECODE_STOPPED:
        return ad.rc < 0 ? ad.rc : 0;
    default:
        return MANTRA_EFORMAT;
    }
}

int rd_manifest_check(const mantra_trace_event *ev) {
    return mantra_manifest_decode(ev->metadata->manifest_event->tpl, ev->payload, ev->payload_size,
                                  ev->pointer_size ? ev->pointer_size : 8, NULL, NULL, NULL);
}
