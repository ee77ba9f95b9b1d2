/* Events decoded with a manifest loaded at run time (mantra_reader_add_manifest): the field
 * descriptions shown for a manifest template, and the manifest decoder (mantra/manifest.h) walking
 * them beside the template. */
#include <string.h>

#include "mantra/decode.h"
#include "manifest/decode-internal.h"
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

/* The manifest decoder walks the template with the descriptions of metadata->fields beside it (they
 * have the template's shape), so the values it shows carry the reader's descriptions. */
int rd_manifest_decode(const mantra_trace_event *ev, const mantra_field_visitor *visitor, void *ctx) {
    const mantra_trace_metadata *m = ev->metadata;
    mantra_manifest_decode_info info;
    int rc = mf_decode_described(m->manifest_event->tpl, m->fields, ev->payload, ev->payload_size,
                                 ev->pointer_size ? ev->pointer_size : 8, visitor, ctx, &info);
    if (info.stopped)
        return rc; /* a callback's negative result */
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
    if (ev->metadata->manifest_plan != NULL) /* the reader's metadata: lengths only (manifest_check.c) */
        return rd_manifest_plan_check(ev->metadata->manifest_plan, ev->payload, ev->payload_size);
    return mantra_manifest_decode(ev->metadata->manifest_event->tpl, ev->payload, ev->payload_size,
                                  ev->pointer_size ? ev->pointer_size : 8, NULL, NULL, NULL);
}
