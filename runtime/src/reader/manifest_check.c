/* Length plans for manifest templates (reader-internal.h, rd_manifest_plan_build): the check of a
 * payload against a manifest template (the event's decode_status) compiled once per metadata record,
 * so that reading an event does not walk the template with the full decoder (values built, maps
 * formatted) before the caller's visitor walks it again (mantra_decode_event). The plan only
 * measures: runs of fixed-size fields become one bounds check, strings a scan for their terminator,
 * counts and lengths taken from another field one load. Its result is exactly that of
 * mantra_manifest_decode(tpl, payload, size, pointer_size, NULL, NULL, NULL) (manifest/visit.c):
 * MANTRA_DECODE_SHORT where a field does not fit, MANTRA_DECODE_BAD_STRING for a string without
 * terminator, MANTRA_DECODE_TRAILING for bytes after the last field; fuzz_reader compares the two. */
#include <string.h>

#include "common/le-internal.h"
#include "field_plan-internal.h"
#include "manifest/decode-internal.h"
#include "mantra/manifest.h"
#include "reader-internal.h"

enum {
    MK_FIXED,  /* n bytes (a run of fixed-size fields none of the others counts by) */
    MK_SLOT,   /* an integer of esize bytes whose value a later count or length takes (slot) */
    MK_STR16,  /* NUL-terminated UTF-16LE */
    MK_STR8,   /* NUL-terminated bytes */
    MK_ARRAY,  /* count elements of esize bytes: count n, or from slot */
    MK_STRUCT, /* count elements of the members' plan: count n, or from slot */
    MK_BAD     /* a scalar type the decoder cannot read (never from the loader): short */
};

typedef struct mk_step {
    uint8_t kind;
    uint8_t from_slot; /* MK_ARRAY, MK_STRUCT: the count is the value of `slot` */
    uint16_t slot;
    uint32_t esize;
    uint64_t n;
    const struct mantra_manifest_plan *members; /* MK_STRUCT */
} mk_step;

struct mantra_manifest_plan {
    uint32_t count;
    uint32_t slots; /* slots its counts refer to (MANTRA_MANIFEST_MAX_SLOTS at most) */
    mk_step steps[];
};

/* Bytes of one value of a fixed-size scalar type (manifest/visit.c read_scalar), 0 when not one. */
static uint32_t scalar_size(const mantra_manifest_field *f, uint32_t pointer_size) {
    switch (f->type) {
    case MANTRA_TYPE_SBYTE:
    case MANTRA_TYPE_BYTE:
        return 1;
    case MANTRA_TYPE_INT16:
    case MANTRA_TYPE_UINT16:
        return 2;
    case MANTRA_TYPE_INT32:
    case MANTRA_TYPE_UINT32:
    case MANTRA_TYPE_BOOLEAN:
    case MANTRA_TYPE_SINGLE:
        return 4;
    case MANTRA_TYPE_INT64:
    case MANTRA_TYPE_UINT64:
    case MANTRA_TYPE_DATETIME:
    case MANTRA_TYPE_DOUBLE:
        return 8;
    case MANTRA_TYPE_POINTER:
        return pointer_size;
    case MANTRA_TYPE_GUID:
        return 16;
    default:
        return 0;
    }
}

static const rd_manifest_plan *build(cm_arena *a, const mantra_manifest_field *list, uint32_t n, uint32_t psize,
                                     int depth);

/* Appends f's step to p (merging a fixed-size field into a preceding MK_FIXED run). 0 or ENOMEM. */
static int add_field(cm_arena *a, rd_manifest_plan *p, const mantra_manifest_field *list,
                     const mantra_manifest_field *f, uint32_t psize, int depth) {
    mk_step s;
    memset(&s, 0, sizeof s);
    uint64_t count = 1;
    int counted = f->count_kind != MANTRA_MANIFEST_REF_NONE;
    if (f->count_kind == MANTRA_MANIFEST_REF_FIXED)
        count = f->count;
    else if (f->count_kind == MANTRA_MANIFEST_REF_FIELD)
        s.from_slot = 1, s.slot = list[f->count].slot;
    if (f->type == MANTRA_TYPE_OBJECT && f->layout == MANTRA_MANIFEST_LAYOUT_C) {
        s.kind = MK_ARRAY; /* elements of one fixed size, padding included (manifest/visit.c) */
        s.esize = (uint32_t)mf_c_element_size(f, psize);
        s.n = count;
    } else if (f->type == MANTRA_TYPE_OBJECT) {
        s.kind = MK_STRUCT;
        s.n = count;
        s.members = build(a, f->members, f->member_count, psize, depth + 1);
        if (s.members == NULL)
            return MANTRA_ENOMEM;
    } else if (f->type == MANTRA_TYPE_BINARY) {
        s.kind = MK_ARRAY;
        s.esize = 1;
        s.from_slot = f->length_kind == MANTRA_MANIFEST_REF_FIELD;
        s.slot = s.from_slot ? list[f->length].slot : 0;
        s.n = f->length;
    } else if (counted) {
        s.kind = MK_ARRAY;
        s.esize = f->type == MANTRA_TYPE_POINTER ? psize : f->size;
        s.n = count;
    } else if (f->type == MANTRA_TYPE_STRING || f->type == MANTRA_TYPE_STRING8) {
        s.kind = f->type == MANTRA_TYPE_STRING ? MK_STR16 : MK_STR8;
    } else if ((s.esize = scalar_size(f, psize)) == 0) {
        s.kind = MK_BAD;
    } else if (f->slot != MANTRA_MANIFEST_NO_SLOT) {
        s.kind = MK_SLOT;
        s.slot = f->slot;
    } else {
        s.kind = MK_FIXED;
        s.n = s.esize;
    }
    if (s.kind == MK_ARRAY && !s.from_slot) { /* a fixed number of fixed-size elements */
        s.kind = MK_FIXED;
        s.n *= s.esize; /* at most 2^32 x 16: no overflow */
    }
    if ((s.kind == MK_SLOT || s.from_slot) && s.slot >= p->slots)
        p->slots = s.slot + 1u;
    if (s.kind == MK_FIXED && p->count > 0 && p->steps[p->count - 1].kind == MK_FIXED) {
        p->steps[p->count - 1].n += s.n;
        return 0;
    }
    p->steps[p->count++] = s;
    return 0;
}

static const rd_manifest_plan *build(cm_arena *a, const mantra_manifest_field *list, uint32_t n, uint32_t psize,
                                     int depth) {
    if (depth > 16) /* the loader allows one level of structs */
        return NULL;
    rd_manifest_plan *p = cm_arena_alloc(a, sizeof *p + (size_t)n * sizeof(mk_step));
    if (p == NULL)
        return NULL;
    p->count = 0;
    p->slots = 0;
    for (uint32_t i = 0; i < n; i++)
        if (add_field(a, p, list, &list[i], psize, depth) < 0)
            return NULL;
    if (p->slots > MANTRA_MANIFEST_MAX_SLOTS)
        return NULL;
    return p;
}

const rd_manifest_plan *rd_manifest_plan_build(cm_arena *a, const struct mantra_manifest_event *e,
                                               uint32_t pointer_size) {
    const mantra_manifest_template *t = e->tpl;
    return build(a, t ? t->fields : NULL, t ? t->field_count : 0, pointer_size == 4 ? 4u : 8u, 0);
}

/* The fields of p at *pos of payload[0..size): MANTRA_DECODE_OK (*pos past them) or the error. */
static int check(const rd_manifest_plan *p, const uint8_t *payload, size_t size, size_t *ppos) {
    uint64_t slots[MANTRA_MANIFEST_MAX_SLOTS];
    size_t pos = *ppos;
    for (uint32_t i = 0; i < p->count; i++) {
        const mk_step *s = &p->steps[i];
        size_t left = size - pos;
        switch (s->kind) {
        case MK_FIXED:
            if (s->n > left)
                return MANTRA_DECODE_SHORT;
            pos += (size_t)s->n;
            break;
        case MK_SLOT: {
            if (s->esize > left)
                return MANTRA_DECODE_SHORT;
            const uint8_t *q = payload + pos;
            slots[s->slot] = s->esize == 1 ? q[0] : s->esize == 2 ? mantra_load_u16(q)
                                                : s->esize == 4   ? mantra_load_u32(q)
                                                                  : mantra_load_u64(q);
            pos += s->esize;
            break;
        }
        case MK_STR16: {
            size_t k = rd_str16_end(payload, size, pos);
            if (k == 0)
                return MANTRA_DECODE_BAD_STRING;
            pos = k;
            break;
        }
        case MK_STR8: {
            const uint8_t *nul = memchr(payload + pos, 0, left);
            if (nul == NULL)
                return MANTRA_DECODE_BAD_STRING;
            pos = (size_t)(nul - payload) + 1;
            break;
        }
        case MK_ARRAY: {
            uint64_t count = slots[s->slot];
            if (s->esize != 0 && count > left / s->esize)
                return MANTRA_DECODE_SHORT;
            pos += (size_t)count * s->esize;
            break;
        }
        case MK_STRUCT: {
            uint64_t count = s->from_slot ? slots[s->slot] : s->n;
            for (uint64_t e = 0; e < count; e++) {
                size_t before = pos;
                int rc = check(s->members, payload, size, &pos);
                if (rc != MANTRA_DECODE_OK)
                    return rc;
                if (pos == before)
                    break; /* zero-sized elements: walked once, as the decoder does */
            }
            break;
        }
        default:
            return MANTRA_DECODE_SHORT;
        }
    }
    *ppos = pos;
    return MANTRA_DECODE_OK;
}

int rd_manifest_plan_check(const rd_manifest_plan *p, const uint8_t *payload, size_t size) {
    static const uint8_t empty[1];
    size_t pos = 0;
    if (payload == NULL) {
        payload = empty;
        size = 0;
    }
    int rc = check(p, payload, size, &pos);
    if (rc != MANTRA_DECODE_OK)
        return rc;
    return pos == size ? MANTRA_DECODE_OK : MANTRA_DECODE_TRAILING;
}
