/* Decoding plans (field_plan-internal.h): a metadata record's top-level fields as a flat list of
 * steps, compiled once. The payload encodings are those of the nettrace type codes (microsoft/perfview,
 * src/TraceEvent/EventPipe/EventPipeMetadata.cs and NetTraceFormat.md, the TypeCode table), the same
 * field_decode.c reads: little-endian fixed-size scalars, NUL-terminated UTF-16LE strings, LEB128
 * varints (zig-zag for VarInt). Arrays, objects and located data are decoded by field_decode.c's
 * walker, one field at a time. */
#include <string.h>

#include "common/le-internal.h"
#include "common/varint-internal.h"
#include "field_plan-internal.h"

enum {
    OP_U8,  /* Byte, UTF8 code unit, Boolean8 */
    OP_S8,  /* SByte */
    OP_U16, /* Char, UInt16 */
    OP_S16, /* Int16 */
    OP_U32, /* Boolean (4 bytes), UInt32 */
    OP_S32, /* Int32 */
    OP_U64, /* Int64, UInt64, DateTime */
    OP_F32,
    OP_F64,
    OP_RAW16, /* Decimal: the 16 bytes */
    OP_GUID,
    OP_STR16,
    OP_VARUINT,
    OP_VARINT,
    OP_ARRAY, /* Array (UInt16 count) or FixedArray of fixed-size scalars (>= OP_ARRAY: not a scalar) */
    OP_WALK   /* anything else: field_decode.c's walker */
};

typedef struct plan_step {
    uint8_t op;
    uint8_t size;  /* bytes of a fixed-size step, else 0 */
    uint8_t eop;   /* OP_ARRAY: the elements' op */
    uint8_t esize; /* OP_ARRAY: their size */
    uint32_t type; /* f->type and f->name, kept here: one load less each per value */
    const char *name;
    const mantra_field_desc *f;
} plan_step;

/* The check (rd_plan_check) has its own, shorter list: a run of fixed-size fields (FixedArrays of
 * fixed-size elements included) is one bounds check. */
enum { CK_FIXED, CK_STR16, CK_ARRAY16, CK_VARINT, CK_WALK };

typedef struct check_step {
    uint8_t op;
    uint64_t n; /* CK_FIXED: bytes; CK_ARRAY16: bytes of one element */
    const mantra_field_desc *f; /* CK_WALK */
} check_step;

struct mantra_field_plan {
    rd_plan_head head; /* first: rd_plan_check_note reaches it through the plan's address */
    uint32_t count;
    uint32_t ncheck;
    const check_step *check;
    plan_step steps[];
};

/* The check steps of p's steps (allocated in a); 0 or MANTRA_ENOMEM. */
static int build_check(cm_arena *a, mantra_field_plan *p) {
    check_step *c = cm_arena_alloc(a, (size_t)p->count * sizeof *c);
    if (c == NULL)
        return MANTRA_ENOMEM;
    uint32_t n = 0;
    for (uint32_t i = 0; i < p->count; i++) {
        const plan_step *s = &p->steps[i];
        check_step k = {CK_WALK, 0, s->f};
        if (s->size)
            k.op = CK_FIXED, k.n = s->size;
        else if (s->op == OP_ARRAY && s->f->type == MANTRA_TYPE_FIXED_ARRAY)
            k.op = CK_FIXED, k.n = (uint64_t)s->f->fixed_count * s->esize;
        else if (s->op == OP_ARRAY)
            k.op = CK_ARRAY16, k.n = s->esize;
        else if (s->op == OP_STR16)
            k.op = CK_STR16;
        else if (s->op == OP_VARUINT || s->op == OP_VARINT)
            k.op = CK_VARINT;
        if (k.op == CK_FIXED && n > 0 && c[n - 1].op == CK_FIXED)
            c[n - 1].n += k.n; /* at most 2^32 fields of 2^32 x 16 bytes: no overflow */
        else
            c[n++] = k;
    }
    p->check = c;
    p->ncheck = n;
    /* the layouts rd_plan_check_note checks inline: [fixed bytes] then a string or an array */
    const check_step *last = &c[n - 1];
    p->head.shape = RD_SHAPE_OTHER;
    if (n <= 2 && (n == 1 || (c[0].op == CK_FIXED && c[0].n <= UINT32_MAX))) {
        p->head.prefix = n == 2 ? (uint32_t)c[0].n : 0;
        if (last->op == CK_STR16) {
            p->head.shape = RD_SHAPE_STR_END;
        } else if (last->op == CK_ARRAY16) {
            p->head.shape = RD_SHAPE_ARRAY_END;
            p->head.esize = (uint8_t)last->n;
        }
    }
    return 0;
}

static uint8_t op_of(uint32_t type, uint8_t *size) {
    switch (type) {
    case MANTRA_TYPE_BYTE:
    case MANTRA_TYPE_UTF8_CODE_UNIT:
    case MANTRA_TYPE_BOOLEAN8:
        return *size = 1, OP_U8;
    case MANTRA_TYPE_SBYTE:
        return *size = 1, OP_S8;
    case MANTRA_TYPE_CHAR:
    case MANTRA_TYPE_UINT16:
        return *size = 2, OP_U16;
    case MANTRA_TYPE_INT16:
        return *size = 2, OP_S16;
    case MANTRA_TYPE_BOOLEAN:
    case MANTRA_TYPE_UINT32:
        return *size = 4, OP_U32;
    case MANTRA_TYPE_INT32:
        return *size = 4, OP_S32;
    case MANTRA_TYPE_INT64:
    case MANTRA_TYPE_UINT64:
    case MANTRA_TYPE_DATETIME:
        return *size = 8, OP_U64;
    case MANTRA_TYPE_SINGLE:
        return *size = 4, OP_F32;
    case MANTRA_TYPE_DOUBLE:
        return *size = 8, OP_F64;
    case MANTRA_TYPE_DECIMAL:
        return *size = 16, OP_RAW16;
    case MANTRA_TYPE_GUID:
        return *size = 16, OP_GUID;
    case MANTRA_TYPE_STRING:
        return *size = 0, OP_STR16;
    case MANTRA_TYPE_VARUINT:
        return *size = 0, OP_VARUINT;
    case MANTRA_TYPE_VARINT:
        return *size = 0, OP_VARINT;
    default:
        return *size = 0, OP_WALK;
    }
}

void rd_plan_forget_notes(rd_plan_head *plans) {
    for (rd_plan_head *h = plans; h != NULL; h = h->next)
        h->exact_payload = NULL;
}

const mantra_field_plan *rd_plan_build(cm_arena *a, const mantra_field_desc *fields, uint32_t count,
                                       rd_plan_head **plans) {
    if (fields == NULL || count == 0)
        return NULL;
    mantra_field_plan *p = cm_arena_alloc(a, sizeof *p + (size_t)count * sizeof(plan_step));
    if (p == NULL)
        return NULL;
    p->count = count;
    p->head.exact_payload = NULL;
    p->head.exact_size = 0;
    for (uint32_t i = 0; i < count; i++) {
        plan_step *s = &p->steps[i];
        s->f = &fields[i];
        s->type = fields[i].type;
        s->name = fields[i].name;
        s->op = op_of(fields[i].type, &s->size);
        s->eop = s->esize = 0;
        const mantra_field_desc *el = fields[i].element;
        if ((fields[i].type == MANTRA_TYPE_ARRAY || fields[i].type == MANTRA_TYPE_FIXED_ARRAY) && el != NULL) {
            uint8_t es, eop = op_of(el->type, &es);
            if (es != 0) { /* elements of fixed size; a FixedArray of them is still decoded by steps */
                s->op = OP_ARRAY;
                s->eop = eop;
                s->esize = es;
            }
        }
    }
    p->head.last_str = plans != NULL && p->steps[count - 1].op == OP_STR16;
    if (build_check(a, p) < 0)
        return NULL;
    if (plans != NULL) {
        p->head.next = *plans;
        *plans = &p->head;
    }
    return p;
}


/* A check step of the common kinds (fixed bytes, a string, an array) at *pos: 1 when done, 0 when
 * s is of another kind, MANTRA_EFORMAT when the payload ends first. */
static inline int check_common(const check_step *s, const uint8_t *payload, size_t size, size_t *ppos) {
    size_t pos = *ppos, k;
    switch (s->op) {
    case CK_FIXED:
        if (s->n > size - pos)
            return MANTRA_EFORMAT;
        *ppos = pos + (size_t)s->n;
        return 1;
    case CK_STR16:
        k = rd_str16_end(payload, size, pos);
        if (k == 0)
            return MANTRA_EFORMAT;
        *ppos = k;
        return 1;
    case CK_ARRAY16:
        k = rd_array16_end(payload, size, pos, (size_t)s->n);
        if (k == 0)
            return MANTRA_EFORMAT;
        *ppos = k;
        return 1;
    default:
        return 0;
    }
}

/* rd_plan_check from step s at pos on, with the rarer kinds (varints, the walker). */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static int check_from(const check_step *s, const check_step *end, const uint8_t *payload, size_t size, size_t pos) {
    for (; s < end; s++) {
        int rc = check_common(s, payload, size, &pos);
        if (rc < 0)
            return rc;
        if (rc == 1)
            continue;
        if (s->op == CK_VARINT) {
            uint64_t v;
            size_t k = cm_varint_get(payload + pos, size - pos, CM_VARINT64_MAX_BYTES, &v);
            if (k == 0)
                return MANTRA_EFORMAT;
            pos += k;
        } else if ((rc = rd_decode_one_field(s->f, payload, size, &pos, NULL, NULL)) < 0) {
            return rc;
        }
    }
    return pos < size;
}

int rd_plan_check(const mantra_field_plan *plan, const uint8_t *payload, size_t size) {
    /* all-fixed layouts never get here: the metadata's fixed_payload_size (rd_fields_fixed_size,
     * computed once per metadata record) settles them in rd_event_decode_status. The common steps
     * in a small loop (few registers to save per event); the first other one hands the rest to
     * check_from. */
    size_t pos = 0;
    const check_step *s = plan->check, *end = s + plan->ncheck;
    for (; s < end; s++) {
        int rc = check_common(s, payload, size, &pos);
        if (rc < 0)
            return rc;
        if (rc == 0)
            return check_from(s, end, payload, size, pos);
    }
    return pos < size;
}

/* The value of a fixed-size scalar at p: u and i (0 for floats, GUIDs and Decimal), and d or guid
 * for the types that have them. 1 when it set d or guid (the caller clears them before the next
 * value: they are 0 for every other type), else 0. */
static inline int fill_fixed(uint8_t op, const uint8_t *p, mantra_value *v) {
    switch (op) {
    case OP_U8:
        v->u = p[0];
        v->i = (int64_t)v->u;
        return 0;
    case OP_S8:
        v->u = p[0];
        v->i = (int8_t)p[0];
        return 0;
    case OP_U16:
        v->u = mantra_load_u16(p);
        v->i = (int64_t)v->u;
        return 0;
    case OP_S16:
        v->u = mantra_load_u16(p);
        v->i = (int16_t)mantra_load_u16(p);
        return 0;
    case OP_U32:
        v->u = mantra_load_u32(p);
        v->i = (int64_t)v->u;
        return 0;
    case OP_S32:
        v->u = mantra_load_u32(p);
        v->i = (int32_t)mantra_load_u32(p);
        return 0;
    case OP_U64:
        v->u = mantra_load_u64(p);
        v->i = (int64_t)v->u;
        return 0;
    case OP_F32: {
        float x;
        memcpy(&x, p, 4);
        v->u = 0;
        v->i = 0;
        v->d = x;
        return 1;
    }
    case OP_F64:
        v->u = 0;
        v->i = 0;
        memcpy(&v->d, p, 8);
        return 1;
    case OP_GUID:
        v->u = 0;
        v->i = 0;
        cm_load_guid(&v->guid, p);
        return 1;
    default: /* OP_RAW16: the bytes only */
        v->u = 0;
        v->i = 0;
        return 0;
    }
}

/* v's d and guid back to 0 (after a value that set them). */
static inline void clear_extra(mantra_value *v) {
    v->d = 0;
    memset(&v->guid, 0, sizeof v->guid);
}

static int call(int (*fn)(void *, const mantra_value *), void *ctx, const mantra_value *v) {
    return fn ? fn(ctx, v) : 0;
}

/* An array of fixed-size scalars, shown as field_decode.c shows it: begin_array (count, the element
 * bytes), one scalar per element at depth 1 (name "", index), end_array. av is the caller's value
 * at depth 0 (manifest_field, depth, index, map_text, d and guid as rd_plan_decode keeps them). */
static int decode_array(const plan_step *s, const uint8_t *payload, size_t size, size_t *ppos,
                        const mantra_field_visitor *visitor, void *ctx, mantra_value *av) {
    size_t pos = *ppos, count = s->f->fixed_count;
    const size_t es = s->esize;
    av->field = s->f;
    av->name = s->name;
    av->type = s->type;
    av->offset = pos;
    av->u = 0;
    av->i = 0;
    if (s->type == MANTRA_TYPE_ARRAY) {
        if (size - pos < 2)
            return MANTRA_EFORMAT;
        count = mantra_load_u16(payload + pos);
        pos += 2;
    }
    /* a multiplication, not a division: count < 2^32 elements of at most 16 bytes */
    if ((uint64_t)count * es > size - pos)
        return MANTRA_EFORMAT;
    av->data = payload + pos;
    av->size = count * es;
    av->count = count;
    int rc = call(visitor->begin_array, ctx, av);
    if (rc < 0)
        return rc;
    int (*const scalar)(void *, const mantra_value *) = visitor->scalar;
    if (rc != 1 && scalar) {
        const mantra_field_desc *el = s->f->element;
        mantra_value e; /* each element sets the same members (one element type); no memset, which
                           compilers make a rep stos that costs more than the stores */
        e.manifest_field = NULL;
        e.index = 0;
        e.offset = 0;
        e.u = 0;
        e.i = 0;
        e.d = 0;
        memset(&e.guid, 0, sizeof e.guid);
        e.data = NULL;
        e.count = 0;
        e.map_text = NULL;
        e.field = el;
        e.name = "";
        e.type = el->type;
        e.depth = 1;
        e.size = es;
        const uint8_t *q = payload + pos;
        /* one loop per common element type, so that the element's load is not a switch */
#define ELEMENTS(LOAD)                                                                             \
    for (size_t i = 0; i < count; i++, q += es) {                                                  \
        e.index = i;                                                                               \
        e.offset = (size_t)(q - payload);                                                          \
        e.data = q;                                                                                \
        LOAD;                                                                                      \
        rc = scalar(ctx, &e);                                                                      \
        if (rc < 0)                                                                                \
            return rc;                                                                             \
    }
        switch (s->eop) {
        case OP_S32:
            ELEMENTS((e.u = mantra_load_u32(q), e.i = (int32_t)(uint32_t)e.u))
            break;
        case OP_U32:
            ELEMENTS((e.u = mantra_load_u32(q), e.i = (int64_t)e.u))
            break;
        case OP_U64:
            ELEMENTS((e.u = mantra_load_u64(q), e.i = (int64_t)e.u))
            break;
        case OP_U8:
            ELEMENTS((e.u = q[0], e.i = (int64_t)e.u))
            break;
        default:
            ELEMENTS((void)fill_fixed(s->eop, q, &e))
            break;
        }
#undef ELEMENTS
    }
    *ppos = pos + count * es;
    return call(visitor->end_array, ctx, av);
}

int rd_plan_decode(const mantra_field_plan *plan, const uint8_t *payload, size_t size,
                   const mantra_field_visitor *visitor, void *ctx) {
    static const uint8_t empty[1];
    static const mantra_field_visitor none = {0};
    if (payload == NULL) {
        payload = empty;
        size = 0;
    }
    if (visitor == NULL)
        visitor = &none;
    int (*const scalar)(void *, const mantra_value *) = visitor->scalar;
    size_t pos = 0;
    mantra_value v;
    v.manifest_field = NULL; /* these stay as they are for every value at depth 0 */
    v.depth = 0;
    v.index = 0;
    v.map_text = NULL;
    clear_extra(&v);
    int extra = 0; /* d or guid set by the last value */
    const plan_step *s = plan->steps, *end = s + plan->count;
    /* the payload the reader found to hold the fields exactly (rd_plan_check_note): the string
     * that ends it ends where it does */
    const rd_plan_head *h = &plan->head;
    const plan_step *str_at_end = h->last_str && payload == h->exact_payload && size == h->exact_size ? end - 1 : NULL;
    for (; s < end; s++) {
        if (extra) {
            clear_extra(&v);
            extra = 0;
        }
        if (s->op >= OP_ARRAY) {
            size_t at = pos; /* pos itself never has its address taken: it stays in a register */
            int rc = s->op == OP_ARRAY ? decode_array(s, payload, size, &at, visitor, ctx, &v)
                                       : rd_decode_one_field(s->f, payload, size, &at, visitor, ctx);
            if (rc < 0)
                return rc;
            pos = at;
            continue;
        }
        v.field = s->f;
        v.name = s->name;
        v.type = s->type;
        v.offset = pos;
        const uint8_t *q = payload + pos;
        const size_t left = size - pos;
        v.data = q;
        v.count = 0;
        /* one dispatch per step: the common scalars each in a case of their own, where fill_fixed
         * (inline) folds to their load and their size is a constant */
#define FIXED(OP, N)                                                                               \
    if (left < (N))                                                                                \
        return MANTRA_EFORMAT;                                                                     \
    (void)fill_fixed((OP), q, &v);                                                                 \
    v.size = (N);                                                                                  \
    pos += (N);                                                                                    \
    break;
        switch (s->op) {
        case OP_U8:
            FIXED(OP_U8, 1)
        case OP_U32:
            FIXED(OP_U32, 4)
        case OP_S32:
            FIXED(OP_S32, 4)
        case OP_U64:
            FIXED(OP_U64, 8)
        case OP_U16:
            FIXED(OP_U16, 2)
#undef FIXED
        case OP_STR16: {
            size_t e = s == str_at_end && left >= 2 ? size : rd_str16_end(payload, size, pos);
            if (e == 0)
                return MANTRA_EFORMAT;
            v.u = 0;
            v.i = 0;
            v.count = (e - pos - 2) / 2;
            v.size = v.count * 2;
            pos = e;
            break;
        }
        case OP_VARUINT:
        case OP_VARINT: {
            size_t k = cm_varint_get(q, left, CM_VARINT64_MAX_BYTES, &v.u);
            if (k == 0)
                return MANTRA_EFORMAT;
            v.i = s->op == OP_VARINT ? cm_zigzag_decode(v.u) : (int64_t)v.u;
            v.size = k;
            pos += k;
            break;
        }
        default: /* the other fixed-size scalars */
            if (s->size > left)
                return MANTRA_EFORMAT;
            extra = fill_fixed(s->op, q, &v);
            v.size = s->size;
            pos += s->size;
            break;
        }
        if (scalar) {
            int rc = scalar(ctx, &v);
            if (rc < 0)
                return rc;
        }
    }
    return pos < size ? 1 : 0;
}
