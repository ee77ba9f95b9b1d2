/* V5 metadata blob builder (mantra/metadata.h). Layouts as the runtime writes them and TraceEvent
 * reads them: dotnet/runtime, src/native/eventpipe/ep-metadata-generator.c (V1 fields, tags, V2
 * fields) and src/libraries/System.Private.CoreLib/src/System/Diagnostics/Tracing/
 * EventPipeMetadataGenerator.cs; microsoft/perfview, src/TraceEvent/EventPipe/EventPipeMetadata.cs
 * (ReadV5OrLower). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow-internal.h"
#include "common/le-internal.h"
#include "common/utf-internal.h"
#include "mantra/metadata.h"

typedef struct node {
    uint32_t type;      /* TypeCode; MANTRA_TYPE_ARRAY for arrays */
    uint32_t elem;      /* arrays: element TypeCode (MANTRA_TYPE_OBJECT for struct arrays) */
    size_t name_off;    /* into names (UTF-8, NUL-terminated) */
    int32_t first_child, last_child, next; /* struct members (structs and struct arrays) */
    uint32_t child_count;
} node;

struct mantra_metadata_builder {
    int started;
    uint32_t event_id, version, level;
    uint64_t keywords;
    uint8_t opcode;
    int force_v2, has_array;
    size_t event_name;
    node *nodes;
    uint32_t node_count;
    size_t node_cap;
    int32_t root_first, root_last;
    uint32_t root_count;
    int32_t open[MANTRA_METADATA_MAX_DEPTH];
    int depth;
    char *names;
    size_t names_len, names_cap;
    uint8_t *out;
    size_t out_len, out_cap;
    int oom;
    char err[256];
};

#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 3, 4)))
#endif
static int fail(mantra_metadata_builder *b, int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->err, sizeof b->err, fmt, ap);
    va_end(ap);
    return code;
}

int mantra_metadata_builder_new(mantra_metadata_builder **out) {
    if (!out)
        return MANTRA_EINVAL;
    *out = calloc(1, sizeof **out);
    return *out ? MANTRA_OK : MANTRA_ENOMEM;
}

void mantra_metadata_builder_free(mantra_metadata_builder *b) {
    if (!b)
        return;
    free(b->nodes);
    free(b->names);
    free(b->out);
    free(b);
}

const char *mantra_metadata_last_error(const mantra_metadata_builder *b) { return b ? b->err : "no builder"; }

static int add_name(mantra_metadata_builder *b, const char *name, size_t *off) {
    size_t bytes;
    if (!name)
        name = "";
    if (cm_utf8_utf16_units(name, &bytes) == SIZE_MAX)
        return fail(b, MANTRA_EINVAL, "name is not valid UTF-8");
    if (cm_grow((void **)&b->names, &b->names_cap, b->names_len + bytes + 1, 1, 256) != MANTRA_OK)
        return fail(b, MANTRA_ENOMEM, "out of memory");
    memcpy(b->names + b->names_len, name, bytes + 1);
    *off = b->names_len;
    b->names_len += bytes + 1;
    return MANTRA_OK;
}

int mantra_metadata_begin(mantra_metadata_builder *b, uint32_t event_id, const char *name, uint64_t keywords,
                          uint32_t version, uint32_t level, uint8_t opcode) {
    if (!b)
        return MANTRA_EINVAL;
    b->started = 0;
    b->node_count = 0;
    b->names_len = 0;
    b->root_first = b->root_last = -1;
    b->root_count = 0;
    b->depth = 0;
    b->has_array = 0;
    b->force_v2 = 0;
    b->err[0] = 0;
    int rc = add_name(b, name, &b->event_name);
    if (rc != MANTRA_OK)
        return rc;
    b->event_id = event_id;
    b->keywords = keywords;
    b->version = version;
    b->level = level;
    b->opcode = opcode;
    b->started = 1;
    return MANTRA_OK;
}

int mantra_metadata_force_v2(mantra_metadata_builder *b, int on) {
    if (!b)
        return MANTRA_EINVAL;
    if (!b->started)
        return fail(b, MANTRA_ESTATE, "force_v2 before begin");
    b->force_v2 = on != 0;
    return MANTRA_OK;
}

static int add_node(mantra_metadata_builder *b, const char *name, uint32_t type, uint32_t elem, int32_t *index) {
    if (!b->started)
        return fail(b, MANTRA_ESTATE, "field before mantra_metadata_begin()");
    if (cm_grow((void **)&b->nodes, &b->node_cap, (size_t)b->node_count + 1, sizeof *b->nodes, 32) != MANTRA_OK)
        return fail(b, MANTRA_ENOMEM, "out of memory");
    size_t off;
    int rc = add_name(b, name, &off);
    if (rc != MANTRA_OK)
        return rc;
    int32_t i = (int32_t)b->node_count++;
    node *n = &b->nodes[i];
    n->type = type;
    n->elem = elem;
    n->name_off = off;
    n->first_child = n->last_child = n->next = -1;
    n->child_count = 0;
    if (b->depth == 0) {
        if (b->root_last >= 0)
            b->nodes[b->root_last].next = i;
        else
            b->root_first = i;
        b->root_last = i;
        b->root_count++;
    } else {
        node *p = &b->nodes[b->open[b->depth - 1]];
        if (p->last_child >= 0)
            b->nodes[p->last_child].next = i;
        else
            p->first_child = i;
        p->last_child = i;
        p->child_count++;
    }
    if (index)
        *index = i;
    return MANTRA_OK;
}

static int scalar_ok(uint32_t t) { return t >= MANTRA_TYPE_BOOLEAN && t <= MANTRA_TYPE_STRING; }

int mantra_metadata_field(mantra_metadata_builder *b, const char *name, uint32_t typecode) {
    if (!b)
        return MANTRA_EINVAL;
    if (!scalar_ok(typecode))
        return fail(b, MANTRA_EINVAL, "type code %u is not a scalar type (3..18)", typecode);
    return add_node(b, name, typecode, 0, NULL);
}

int mantra_metadata_array(mantra_metadata_builder *b, const char *name, uint32_t element_typecode) {
    if (!b)
        return MANTRA_EINVAL;
    if (!scalar_ok(element_typecode))
        return fail(b, MANTRA_EINVAL, "array element type code %u is not a scalar type", element_typecode);
    int rc = add_node(b, name, MANTRA_TYPE_ARRAY, element_typecode, NULL);
    if (rc == MANTRA_OK)
        b->has_array = 1;
    return rc;
}

static int begin_struct(mantra_metadata_builder *b, const char *name, int array) {
    if (!b)
        return MANTRA_EINVAL;
    if (b->depth == MANTRA_METADATA_MAX_DEPTH)
        return fail(b, MANTRA_ERANGE, "structs nested deeper than %d", MANTRA_METADATA_MAX_DEPTH);
    int32_t i = -1;
    int rc = add_node(b, name, array ? MANTRA_TYPE_ARRAY : MANTRA_TYPE_OBJECT, array ? MANTRA_TYPE_OBJECT : 0, &i);
    if (rc != MANTRA_OK)
        return rc;
    if (array)
        b->has_array = 1;
    b->open[b->depth++] = i;
    return MANTRA_OK;
}

int mantra_metadata_begin_struct(mantra_metadata_builder *b, const char *name) { return begin_struct(b, name, 0); }
int mantra_metadata_begin_struct_array(mantra_metadata_builder *b, const char *name) {
    return begin_struct(b, name, 1);
}

int mantra_metadata_end_struct(mantra_metadata_builder *b) {
    if (!b)
        return MANTRA_EINVAL;
    if (b->depth == 0)
        return fail(b, MANTRA_ESTATE, "end_struct without an open struct");
    b->depth--;
    return MANTRA_OK;
}

/* ---- serialisation ------------------------------------------------------------------------- */

static uint8_t *reserve(mantra_metadata_builder *b, size_t n) {
    if (b->oom)
        return NULL;
    if (cm_grow((void **)&b->out, &b->out_cap, b->out_len + n, 1, 256) != MANTRA_OK) {
        b->oom = 1;
        return NULL;
    }
    uint8_t *p = b->out + b->out_len;
    b->out_len += n;
    return p;
}

static void emit_u32(mantra_metadata_builder *b, uint32_t v) {
    uint8_t *p = reserve(b, 4);
    if (p)
        cm_store_u32(p, v);
}

static void emit_bytes(mantra_metadata_builder *b, const void *v, size_t n) {
    uint8_t *p = reserve(b, n);
    if (p && n)
        memcpy(p, v, n);
}

/* UTF-16LE + NUL (names were validated when added). */
static void emit_name(mantra_metadata_builder *b, size_t off) {
    const char *s = b->names + off;
    size_t bytes;
    size_t units = cm_utf8_utf16_units(s, &bytes);
    uint8_t *p = reserve(b, (units + 1) * 2);
    if (!p)
        return;
    size_t n = cm_utf8_to_utf16le(s, bytes, p);
    p[n] = 0;
    p[n + 1] = 0;
}

/* V1 field (EventPipeMetadataGenerator.cs): TypeCode, [Object: count + fields], name after the type. */
static void emit_v1(mantra_metadata_builder *b, int32_t i) {
    const node *n = &b->nodes[i];
    emit_u32(b, n->type);
    if (n->type == MANTRA_TYPE_OBJECT) {
        emit_u32(b, n->child_count);
        for (int32_t c = n->first_child; c >= 0; c = b->nodes[c].next)
            emit_v1(b, c);
    }
    emit_name(b, n->name_off);
}

static void emit_v2(mantra_metadata_builder *b, int32_t i);

static void emit_v2_struct_members(mantra_metadata_builder *b, const node *n) {
    emit_u32(b, n->child_count);
    for (int32_t c = n->first_child; c >= 0; c = b->nodes[c].next)
        emit_v2(b, c);
}

/* V2 field (ep-metadata-generator.c, V2Params tag): int32 FieldSize (whole field incl. itself),
 * name, Type (Array: element Type; Object: count + V2 fields). */
static void emit_v2(mantra_metadata_builder *b, int32_t i) {
    size_t start = b->out_len;
    emit_u32(b, 0);
    emit_name(b, b->nodes[i].name_off);
    emit_u32(b, b->nodes[i].type);
    if (b->nodes[i].type == MANTRA_TYPE_ARRAY) {
        emit_u32(b, b->nodes[i].elem);
        if (b->nodes[i].elem == MANTRA_TYPE_OBJECT)
            emit_v2_struct_members(b, &b->nodes[i]);
    } else if (b->nodes[i].type == MANTRA_TYPE_OBJECT) {
        emit_v2_struct_members(b, &b->nodes[i]);
    }
    if (!b->oom)
        cm_store_u32(b->out + start, (uint32_t)(b->out_len - start));
}

int mantra_metadata_finish(mantra_metadata_builder *b, const uint8_t **blob, size_t *size) {
    if (!b || !blob || !size)
        return MANTRA_EINVAL;
    if (!b->started)
        return fail(b, MANTRA_ESTATE, "finish before mantra_metadata_begin()");
    if (b->depth != 0)
        return fail(b, MANTRA_ESTATE, "%d struct(s) still open", b->depth);
    b->out_len = 0;
    b->oom = 0;
    /* EventId, EventName, Keywords, Version, Level */
    emit_u32(b, b->event_id);
    emit_name(b, b->event_name);
    uint8_t kw[8];
    cm_store_u64(kw, b->keywords);
    emit_bytes(b, kw, 8);
    emit_u32(b, b->version);
    emit_u32(b, b->level);
    int v2 = b->has_array || b->force_v2;
    if (v2) {
        emit_u32(b, 0); /* V1 FieldCount is 0 when V2Params carries the fields */
    } else {
        emit_u32(b, b->root_count);
        for (int32_t i = b->root_first; i >= 0; i = b->nodes[i].next)
            emit_v1(b, i);
    }
    if (b->opcode != 0) {
        /* Opcode tag (ep-metadata-generator.c): int32 payload size 1, kind 1, uint8 opcode */
        emit_u32(b, 1);
        uint8_t t[2] = {1, b->opcode};
        emit_bytes(b, t, 2);
    }
    if (v2) {
        size_t start = b->out_len;
        emit_u32(b, 0);
        uint8_t kind = 2; /* V2Params */
        emit_bytes(b, &kind, 1);
        emit_u32(b, b->root_count);
        for (int32_t i = b->root_first; i >= 0; i = b->nodes[i].next)
            emit_v2(b, i);
        if (!b->oom)
            cm_store_u32(b->out + start, (uint32_t)(b->out_len - start - 5));
    }
    if (b->oom)
        return fail(b, MANTRA_ENOMEM, "out of memory");
    *blob = b->out;
    *size = b->out_len;
    return MANTRA_OK;
}
