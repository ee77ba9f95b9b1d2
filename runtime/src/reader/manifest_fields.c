/* Events decoded with a manifest loaded at run time (mantra_reader_add_manifest): the field
 * descriptions shown for a manifest template, and the manifest decoder (mantra/manifest.h) with those
 * descriptions added to the values it shows. */
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

/* ---- decoding ------------------------------------------------------------------------------ */

/* mantra_manifest_decode shows values in the trace's shapes already; the reader adds the
 * descriptions of metadata->fields (mantra_value.field), found from the manifest field and the
 * arrays and objects open around the value. Depths: a template field 0, array elements and struct
 * elements 1, struct members 2, elements of a member's array 3 (no structs in structs). */
#define MAX_DEPTH 4

typedef struct adapter {
    const mantra_field_visitor *v;
    void *ctx;
    const mantra_manifest_template *tpl;
    const mantra_field_desc *fields; /* descriptions of the template's fields */
    const mantra_manifest_field *open_mf[MAX_DEPTH];
    const mantra_field_desc *open_desc[MAX_DEPTH];
    int stopped; /* a callback returned a negative value */
} adapter;

static const mantra_field_desc *desc_of(const adapter *ad, const mantra_value *v) {
    if (v->depth == 0)
        return &ad->fields[v->manifest_field - ad->tpl->fields];
    const mantra_field_desc *parent = ad->open_desc[v->depth - 1];
    if (parent->type != MANTRA_TYPE_OBJECT)
        return parent->element; /* an element of the array open around it */
    return &parent->fields[v->manifest_field - ad->open_mf[v->depth - 1]->members];
}

static int forward(adapter *ad, int (*fn)(void *, const mantra_value *), const mantra_value *v, int open) {
    if (v->depth >= MAX_DEPTH)
        return MANTRA_EFORMAT; /* never: the loader admits no deeper shapes */
    mantra_value w = *v;
    w.field = desc_of(ad, v);
    if (open) {
        ad->open_mf[v->depth] = v->manifest_field;
        ad->open_desc[v->depth] = w.field;
    }
    int rc = fn ? fn(ad->ctx, &w) : 0;
    if (rc < 0)
        ad->stopped = 1;
    return rc;
}

static int on_scalar(void *ctx, const mantra_value *v) {
    adapter *ad = ctx;
    return forward(ad, ad->v->scalar, v, 0);
}
static int on_begin_object(void *ctx, const mantra_value *v) {
    adapter *ad = ctx;
    return forward(ad, ad->v->begin_object, v, 1);
}
static int on_end_object(void *ctx, const mantra_value *v) {
    adapter *ad = ctx;
    return forward(ad, ad->v->end_object, v, 0);
}
static int on_begin_array(void *ctx, const mantra_value *v) {
    adapter *ad = ctx;
    return forward(ad, ad->v->begin_array, v, 1);
}
static int on_end_array(void *ctx, const mantra_value *v) {
    adapter *ad = ctx;
    return forward(ad, ad->v->end_array, v, 0);
}

static const mantra_field_visitor adapter_visitor = {on_scalar, on_begin_object, on_end_object, on_begin_array,
                                                     on_end_array};

int rd_manifest_decode(const mantra_trace_event *ev, const mantra_field_visitor *visitor, void *ctx) {
    const mantra_trace_metadata *m = ev->metadata;
    adapter ad;
    memset(&ad, 0, sizeof ad);
    ad.v = visitor;
    ad.ctx = ctx;
    ad.tpl = m->manifest_event->tpl;
    ad.fields = m->fields;
    int rc = mantra_manifest_decode(ad.tpl, ev->payload, ev->payload_size, ev->pointer_size ? ev->pointer_size : 8,
                                    visitor ? &adapter_visitor : NULL, &ad, NULL);
    if (ad.stopped)
        return rc;
    switch (rc) {
    case MANTRA_DECODE_OK:
        return 0;
    case MANTRA_DECODE_TRAILING:
        return 1;
    default:
        return MANTRA_EFORMAT;
    }
}
int rd_manifest_check(const mantra_trace_event *ev) {
    return mantra_manifest_decode(ev->metadata->manifest_event->tpl, ev->payload, ev->payload_size,
                                  ev->pointer_size ? ev->pointer_size : 8, NULL, NULL, NULL);
}
