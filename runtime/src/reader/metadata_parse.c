/* Metadata records parsed into mantra_trace_metadata trees allocated in the reader's arena, read with
 * the payload cursor (core/cursor-internal.h): V4/V5 (microsoft/perfview,
 * src/TraceEvent/EventPipe/EventPipeMetadata.cs, ReadV5OrLower: V1 field lists, V5 tags, V2Params;
 * dotnet/runtime, src/native/eventpipe/ep-metadata-generator.c) and V6 (microsoft/perfview,
 * src/TraceEvent/EventPipe/NetTraceFormat.md, "Version 6" metadata rows and type codes). */
#include <string.h>

#include "core/cursor-internal.h"
#include "reader-internal.h"

#define MAX_DEPTH 32

/* A cursor over a metadata record, the arena the record goes to, and the first problem met. */
typedef struct mp {
    mantra_cursor c;
    cm_arena *a;
    const char *what;
    int nomem;
} mp;

static mp mp_of(cm_arena *a, const uint8_t *p, size_t n) {
    mp c = {{p, n, 0, 8}, a, NULL, 0};
    return c;
}

static int fail(mp *c, const char *what) {
    if (c->what == NULL)
        c->what = what;
    return -1;
}

/* Each reads one value, or records `what` as the problem and returns -1. */
static int get_u8(mp *c, uint8_t *v, const char *what) {
    return mantra__cursor_u8(&c->c, v) < 0 ? fail(c, what) : 0;
}
static int get_u16(mp *c, uint16_t *v, const char *what) {
    return mantra__cursor_u16(&c->c, v) < 0 ? fail(c, what) : 0;
}
static int get_u32(mp *c, uint32_t *v, const char *what) {
    return mantra__cursor_u32(&c->c, v) < 0 ? fail(c, what) : 0;
}
static int get_u64(mp *c, uint64_t *v, const char *what) {
    return mantra__cursor_u64(&c->c, v) < 0 ? fail(c, what) : 0;
}
static int get_var(mp *c, uint64_t *v, size_t max, const char *what) {
    return mantra__cursor_varint(&c->c, max, v) < 0 ? fail(c, what) : 0;
}

static char *arena_str(mp *c, const char *s, size_t len) {
    char *o = cm_arena_alloc(c->a, len + 1);
    if (o == NULL) {
        c->nomem = 1;
        fail(c, "out of memory");
        return NULL;
    }
    memcpy(o, s, len);
    o[len] = '\0';
    return o;
}

/* UTF-16LE NUL-terminated string -> UTF-8 copy. */
static int get_str16(mp *c, const char **out, const char *what) {
    mantra_str16 s;
    if (mantra__cursor_str16(&c->c, &s) < 0)
        return fail(c, what);
    size_t need = mantra_str16_to_utf8(s, NULL, 0);
    char *o = cm_arena_alloc(c->a, need + 1);
    if (o == NULL) {
        c->nomem = 1;
        return fail(c, "out of memory");
    }
    mantra_str16_to_utf8(s, o, need + 1);
    *out = o;
    return 0;
}

/* V6 string: varuint32 length + UTF-8 bytes. */
static int get_str8(mp *c, const char **out, const char *what) {
    uint64_t len;
    if (get_var(c, &len, CM_VARINT32_MAX_BYTES, what) < 0)
        return -1;
    const uint8_t *p;
    if (len > mantra__cursor_left(&c->c) || mantra__cursor_bytes(&c->c, (size_t)len, &p) < 0)
        return fail(c, what);
    const char *s = arena_str(c, (const char *)p, (size_t)len);
    if (s == NULL)
        return -1;
    *out = s;
    return 0;
}

size_t rd_v6_string(cm_arena *a, const uint8_t *p, size_t n, const char **out) {
    mp c = mp_of(a, p, n);
    if (get_str8(&c, out, "string") < 0)
        return 0;
    return c.c.pos;
}

static mantra_field_desc *alloc_fields(mp *c, uint64_t count, size_t min_each) {
    if (count > mantra__cursor_left(&c->c) / (min_each ? min_each : 1) + 1) {
        fail(c, "field count larger than the metadata");
        return NULL;
    }
    mantra_field_desc *f = cm_arena_alloc(c->a, (size_t)count * sizeof *f + 1);
    if (f == NULL) {
        c->nomem = 1;
        fail(c, "out of memory");
    }
    return f;
}

static int known_v5_type(uint32_t t) { return t >= 1 && t <= 19 && t != 2; }

/* V1 field: int32 TypeCode [Object: int32 count + fields] name. */
static int v1_fields(mp *c, mantra_field_desc *f, uint32_t count, int depth);
static int v1_field(mp *c, mantra_field_desc *f, int depth) {
    uint32_t t;
    if (get_u32(c, &t, "V1 field type code") < 0)
        return -1;
    if (!known_v5_type(t) || t == MANTRA_TYPE_ARRAY)
        return fail(c, t == MANTRA_TYPE_ARRAY ? "array type in a V1 field list" : "unknown field type code");
    f->type = t;
    if (t == MANTRA_TYPE_OBJECT) {
        uint32_t n;
        if (depth >= MAX_DEPTH)
            return fail(c, "objects nested too deeply");
        if (get_u32(c, &n, "V1 object field count") < 0)
            return -1;
        mantra_field_desc *sub = alloc_fields(c, n, 6);
        if (sub == NULL)
            return -1;
        f->fields = sub;
        f->field_count = n;
        if (v1_fields(c, sub, n, depth + 1) < 0)
            return -1;
    }
    return get_str16(c, &f->name, "V1 field name");
}
static int v1_fields(mp *c, mantra_field_desc *f, uint32_t count, int depth) {
    for (uint32_t i = 0; i < count; i++)
        if (v1_field(c, &f[i], depth) < 0)
            return -1;
    return 0;
}

/* V2 type: int32 TypeCode [Array: element type] [Object: int32 count + V2 fields]. */
static int v2_field(mp *c, mantra_field_desc *f, int depth);
static int v2_type(mp *c, mantra_field_desc *f, int depth) {
    uint32_t t;
    if (depth >= MAX_DEPTH)
        return fail(c, "types nested too deeply");
    if (get_u32(c, &t, "V2 type code") < 0)
        return -1;
    if (!known_v5_type(t))
        return fail(c, "unknown field type code");
    f->type = t;
    if (f->name == NULL)
        f->name = "";
    if (t == MANTRA_TYPE_ARRAY) {
        mantra_field_desc *e = alloc_fields(c, 1, 4);
        if (e == NULL)
            return -1;
        e->name = "";
        f->element = e;
        return v2_type(c, e, depth + 1);
    }
    if (t == MANTRA_TYPE_OBJECT) {
        uint32_t n;
        if (get_u32(c, &n, "V2 object field count") < 0)
            return -1;
        mantra_field_desc *sub = alloc_fields(c, n, 10);
        if (sub == NULL)
            return -1;
        f->fields = sub;
        f->field_count = n;
        for (uint32_t i = 0; i < n; i++)
            if (v2_field(c, &sub[i], depth + 1) < 0)
                return -1;
    }
    return 0;
}
static int v2_field(mp *c, mantra_field_desc *f, int depth) {
    size_t start = c->c.pos;
    uint32_t size;
    if (get_u32(c, &size, "V2 field size") < 0)
        return -1;
    if (size < 4 || size > c->c.size - start)
        return fail(c, "V2 field size out of range");
    mp sub = *c;
    sub.c.size = start + size;
    if (get_str16(&sub, &f->name, "V2 field name") < 0 || v2_type(&sub, f, depth) < 0) {
        c->what = sub.what;
        c->nomem = sub.nomem;
        return -1;
    }
    c->c.pos = start + size;
    return 0;
}

/* The blob from EventId on. */
int rd_parse_metadata_v5_blob(cm_arena *a, const uint8_t *p, size_t n, mantra_trace_metadata *m, const char **what) {
    mp c = mp_of(a, p, n);
    uint32_t eid, ver, lvl;
    uint64_t kw;
    if (get_u32(&c, &eid, "event id") < 0 || get_str16(&c, &m->name, "event name") < 0 ||
        get_u64(&c, &kw, "keywords") < 0 || get_u32(&c, &ver, "version") < 0 || get_u32(&c, &lvl, "level") < 0) {
        *what = c.what;
        return c.nomem ? MANTRA_ENOMEM : MANTRA_EFORMAT;
    }
    m->event_id = eid;
    m->keywords = kw;
    m->version = ver;
    m->level = lvl;
    if (mantra__cursor_left(&c.c) == 0)
        return 0; /* no field count at all: no fields (TraceEvent does the same) */
    uint32_t count;
    if (get_u32(&c, &count, "field count") < 0)
        goto invalid;
    mantra_field_desc *f = NULL;
    if (count) {
        f = alloc_fields(&c, count, 6);
        if (f == NULL || v1_fields(&c, f, count, 0) < 0)
            goto invalid;
    }
    m->fields = f;
    m->field_count = count;
    /* V5 tags until the end. */
    while (mantra__cursor_left(&c.c) > 0) {
        uint32_t tsize;
        uint8_t kind;
        if (get_u32(&c, &tsize, "tag size") < 0 || get_u8(&c, &kind, "tag kind") < 0)
            goto invalid;
        if (tsize > mantra__cursor_left(&c.c)) {
            fail(&c, "tag larger than the metadata");
            goto invalid;
        }
        size_t end = c.c.pos + tsize;
        if (kind == 1) { /* Opcode */
            if (tsize < 1) {
                fail(&c, "empty opcode tag");
                goto invalid;
            }
            m->opcode = c.c.data[c.c.pos];
        } else if (kind == 2) { /* V2Params */
            mp sub = c;
            sub.c.size = end;
            uint32_t n2;
            if (get_u32(&sub, &n2, "V2 field count") < 0) {
                c = sub;
                goto invalid;
            }
            mantra_field_desc *f2 = alloc_fields(&sub, n2, 10);
            if (f2 == NULL) {
                c = sub;
                goto invalid;
            }
            for (uint32_t i = 0; i < n2; i++) {
                if (v2_field(&sub, &f2[i], 0) < 0) {
                    c.what = sub.what;
                    c.nomem = sub.nomem;
                    goto invalid;
                }
            }
            m->fields = f2;
            m->field_count = n2;
        }
        c.c.pos = end;
    }
    return 0;
invalid:
    if (c.nomem) {
        *what = "out of memory";
        return MANTRA_ENOMEM;
    }
    /* TraceEvent drops the field list of metadata it cannot parse and keeps the event. */
    m->fields = NULL;
    m->field_count = 0;
    m->fields_invalid = 1;
    *what = c.what;
    return 0;
}

int rd_parse_metadata_v5(cm_arena *a, const uint8_t *p, size_t n, mantra_trace_metadata **out, const char **what) {
    mp c = mp_of(a, p, n);
    mantra_trace_metadata *m = cm_arena_alloc(a, sizeof *m);
    if (m == NULL) {
        *what = "out of memory";
        return MANTRA_ENOMEM;
    }
    if (get_u32(&c, &m->id, "metadata id") < 0 || get_str16(&c, &m->provider, "provider name") < 0) {
        *what = c.what;
        return c.nomem ? MANTRA_ENOMEM : MANTRA_EFORMAT;
    }
    int rc = rd_parse_metadata_v5_blob(a, p + c.c.pos, n - c.c.pos, m, what);
    if (rc < 0)
        return rc;
    *out = m;
    return 0;
}

/* ---- V6 ---- */
static int v6_fieldlist(mp *c, mantra_field_desc **out, uint32_t *count, int depth);

static int v6_known(uint8_t t) { return t >= 1 && t <= 26 && t != 2; }

static int v6_type(mp *c, mantra_field_desc *f, int depth) {
    uint8_t t;
    if (depth >= MAX_DEPTH)
        return fail(c, "types nested too deeply");
    if (get_u8(c, &t, "V6 type code") < 0)
        return -1;
    if (!v6_known(t))
        return fail(c, "unknown V6 type code");
    f->type = t;
    if (f->name == NULL)
        f->name = "";
    if (t == MANTRA_TYPE_ARRAY || t == MANTRA_TYPE_FIXED_ARRAY || t == MANTRA_TYPE_RELLOC ||
        t == MANTRA_TYPE_DATALOC) {
        mantra_field_desc *e = alloc_fields(c, 1, 1);
        if (e == NULL)
            return -1;
        e->name = "";
        f->element = e;
        if (v6_type(c, e, depth + 1) < 0)
            return -1;
        if (t == MANTRA_TYPE_FIXED_ARRAY) {
            uint16_t cnt;
            if (get_u16(c, &cnt, "fixed-length array element count") < 0)
                return -1;
            f->fixed_count = cnt;
        }
    } else if (t == MANTRA_TYPE_OBJECT) {
        mantra_field_desc *sub;
        uint32_t n;
        if (v6_fieldlist(c, &sub, &n, depth + 1) < 0)
            return -1;
        f->fields = sub;
        f->field_count = n;
    }
    return 0;
}

static int v6_fieldlist(mp *c, mantra_field_desc **out, uint32_t *count, int depth) {
    uint16_t n;
    if (get_u16(c, &n, "V6 field count") < 0)
        return -1;
    mantra_field_desc *f = NULL;
    if (n) {
        f = alloc_fields(c, n, 4);
        if (f == NULL)
            return -1;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint16_t fsize;
        size_t start;
        if (get_u16(c, &fsize, "V6 field size") < 0)
            return -1;
        start = c->c.pos;
        if (fsize > c->c.size - start)
            return fail(c, "V6 field size out of range");
        mp sub = *c;
        sub.c.size = start + fsize;
        if (get_str8(&sub, &f[i].name, "V6 field name") < 0 || v6_type(&sub, &f[i], depth) < 0) {
            c->what = sub.what;
            c->nomem = sub.nomem;
            return -1;
        }
        c->c.pos = start + fsize;
    }
    *out = f;
    *count = n;
    return 0;
}

int rd_parse_metadata_v6(cm_arena *a, const uint8_t *p, size_t n, mantra_trace_metadata **out, const char **what) {
    mp c = mp_of(a, p, n);
    mantra_trace_metadata *m = cm_arena_alloc(a, sizeof *m);
    uint64_t id, eid;
    if (m == NULL) {
        *what = "out of memory";
        return MANTRA_ENOMEM;
    }
    if (get_var(&c, &id, CM_VARINT32_MAX_BYTES, "metadata id") < 0 ||
        get_str8(&c, &m->provider, "provider name") < 0 ||
        get_var(&c, &eid, CM_VARINT32_MAX_BYTES, "event id") < 0 || get_str8(&c, &m->name, "event name") < 0 ||
        v6_fieldlist(&c, (mantra_field_desc **)&m->fields, &m->field_count, 0) < 0)
        goto bad;
    m->id = (uint32_t)id;
    m->event_id = (uint32_t)eid;
    uint16_t osize;
    if (get_u16(&c, &osize, "optional metadata size") < 0)
        goto bad;
    if (osize > mantra__cursor_left(&c.c)) {
        fail(&c, "optional metadata larger than the row");
        goto bad;
    }
    mp o = c;
    o.c.size = c.c.pos + osize;
    while (mantra__cursor_left(&o.c) > 0) {
        uint8_t kind, b;
        uint64_t u;
        const char *s;
        if (get_u8(&o, &kind, "optional metadata kind") < 0)
            goto bad_o;
        switch (kind) {
        case 1: /* OpCode */
            if (get_u8(&o, &b, "opcode") < 0)
                goto bad_o;
            m->opcode = b;
            break;
        case 3:
            if (get_u64(&o, &u, "keywords") < 0)
                goto bad_o;
            m->keywords = u;
            break;
        case 4:
        case 5:
            if (get_str8(&o, &s, "message template or description") < 0)
                goto bad_o;
            break;
        case 6:
            if (get_str8(&o, &s, "key") < 0 || get_str8(&o, &s, "value") < 0)
                goto bad_o;
            break;
        case 7:
            if (mantra__cursor_guid(&o.c, &m->provider_guid) < 0) {
                fail(&o, "provider GUID");
                goto bad_o;
            }
            m->has_provider_guid = 1;
            break;
        case 8:
            if (get_u8(&o, &b, "level") < 0)
                goto bad_o;
            m->level = b;
            break;
        case 9:
            if (get_u8(&o, &b, "version") < 0)
                goto bad_o;
            m->version = b;
            break;
        default:
            fail(&o, "unknown optional metadata kind");
            goto bad_o;
        }
    }
    *out = m;
    return 0;
bad_o:
    c.what = o.what;
    c.nomem = o.nomem;
bad:
    *what = c.what;
    return c.nomem ? MANTRA_ENOMEM : MANTRA_EFORMAT;
}
