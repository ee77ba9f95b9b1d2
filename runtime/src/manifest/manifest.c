/* The loaded manifest: arena, errors, GUIDs, lookups and maps (libyaml not needed here). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/str-internal.h"
#include "common/le-internal.h"
#include "common/sha1-internal.h"
#include "common/utf-internal.h"
#include "manifest/manifest-internal.h"

/* ---- errors ----------------------------------------------------------------------------------- */

mantra_manifest_error mf_error_oom = {1, 1, (char *)"<manifest>", (char *)"out of memory", NULL};

static char *dup_string(const char *s) {
    return cm_strdup(s);
}

mantra_manifest_error *mf_error_new(const char *file, unsigned line, unsigned column, const char *message,
                                    const char *note) {
    mantra_manifest_error *e = calloc(1, sizeof *e);
    if (e == NULL)
        return &mf_error_oom;
    e->line = line;
    e->column = column;
    e->file = dup_string(file != NULL ? file : "<memory>");
    e->message = dup_string(message);
    e->note = note != NULL ? dup_string(note) : NULL;
    if (e->file == NULL || e->message == NULL || (note != NULL && e->note == NULL)) {
        mantra_manifest_error_free(e);
        return &mf_error_oom;
    }
    return e;
}

const char *mantra_manifest_error_file(const mantra_manifest_error *e) { return e->file; }
unsigned mantra_manifest_error_line(const mantra_manifest_error *e) { return e->line; }
unsigned mantra_manifest_error_column(const mantra_manifest_error *e) { return e->column; }
const char *mantra_manifest_error_message(const mantra_manifest_error *e) { return e->message; }
const char *mantra_manifest_error_note(const mantra_manifest_error *e) { return e->note; }

size_t mantra_manifest_error_format(const mantra_manifest_error *e, char *buf, size_t size) {
    int n = snprintf(buf, size, "%s:%u:%u: error: %s", e->file, e->line, e->column, e->message);
    return n < 0 ? 0 : (size_t)n;
}

void mantra_manifest_error_free(mantra_manifest_error *e) {
    if (e == NULL || e == &mf_error_oom)
        return;
    free(e->file);
    free(e->message);
    free(e->note);
    free(e);
}

/* ---- types -------------------------------------------------------------------------------------- */

/* The manifest's field types in the order docs/manifest.md lists them, with their spelling and the
 * bytes of one element (0: the trace's pointer size, or variable: strings, Binary, struct). */
const mf_type_info mf_field_types[MF_FIELD_TYPE_COUNT] = {
    {MANTRA_TYPE_SBYTE, "Int8", 1},     {MANTRA_TYPE_BYTE, "UInt8", 1},
    {MANTRA_TYPE_INT16, "Int16", 2},    {MANTRA_TYPE_UINT16, "UInt16", 2},
    {MANTRA_TYPE_INT32, "Int32", 4},    {MANTRA_TYPE_UINT32, "UInt32", 4},
    {MANTRA_TYPE_INT64, "Int64", 8},    {MANTRA_TYPE_UINT64, "UInt64", 8},
    {MANTRA_TYPE_SINGLE, "Float", 4},   {MANTRA_TYPE_DOUBLE, "Double", 8},
    {MANTRA_TYPE_BOOLEAN, "Boolean", 4}, {MANTRA_TYPE_GUID, "GUID", 16},
    {MANTRA_TYPE_POINTER, "Pointer", 0}, {MANTRA_TYPE_DATETIME, "FILETIME", 8},
    {MANTRA_TYPE_STRING, "UnicodeString", 0}, {MANTRA_TYPE_STRING8, "AnsiString", 0},
    {MANTRA_TYPE_BINARY, "Binary", 0},  {MANTRA_TYPE_OBJECT, "struct", 0},
};

const mf_type_info *mf_type_info_of(int type) {
    for (unsigned i = 0; i < MF_FIELD_TYPE_COUNT; i++)
        if (mf_field_types[i].type == type)
            return &mf_field_types[i];
    return NULL;
}

const char *mantra_manifest_type_name(int type) {
    const mf_type_info *t = mf_type_info_of(type);
    return t ? t->name : "?";
}

/* ---- GUIDs ------------------------------------------------------------------------------------- */

void mf_guid_bytes(const mantra_guid *g, uint8_t out[16]) { cm_store_guid(out, g); }

int mf_guid_cmp(const mantra_guid *a, const mantra_guid *b) {
    uint8_t x[16], y[16];
    mf_guid_bytes(a, x);
    mf_guid_bytes(b, y);
    return memcmp(x, y, 16);
}

static const uint8_t EVENTSOURCE_NAMESPACE[16] = {0x48, 0x2C, 0x2D, 0xB2, 0xC3, 0x90, 0x47, 0xC8,
                                                  0x87, 0xF8, 0x1A, 0x15, 0xBF, 0xC1, 0x30, 0xFB};

int mantra_manifest_eventsource_guid(const char *name, mantra_guid *out) {
    cm_sha1 s;
    cm_sha1_init(&s);
    cm_sha1_update(&s, EVENTSOURCE_NAMESPACE, sizeof EVENTSOURCE_NAMESPACE);
    const unsigned char *p = (const unsigned char *)name;
    while (*p != 0) {
        uint32_t c;
        size_t len = mantra_utf8_decode(p, 4, &c); /* stops at the NUL: it is not a continuation byte */
        if (len == 0)
            return -1;
        p += len;
        if (c >= 'a' && c <= 'z')
            c -= 'a' - 'A';
        uint8_t be[4];
        if (c >= 0x10000) {
            uint32_t v = c - 0x10000u;
            unsigned hi = 0xD800u + (unsigned)(v >> 10), lo = 0xDC00u + (unsigned)(v & 0x3FFu);
            be[0] = (uint8_t)(hi >> 8);
            be[1] = (uint8_t)hi;
            be[2] = (uint8_t)(lo >> 8);
            be[3] = (uint8_t)lo;
            cm_sha1_update(&s, be, 4);
        } else {
            be[0] = (uint8_t)(c >> 8);
            be[1] = (uint8_t)c;
            cm_sha1_update(&s, be, 2);
        }
    }
    uint8_t d[20];
    cm_sha1_final(&s, d);
    d[7] = (uint8_t)((d[7] & 0x0F) | 0x50);
    cm_load_guid(out, d); /* the first 16 bytes of the hash, in the .NET byte layout */
    return 0;
}

static int hexval(char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int mantra_manifest_guid_parse(const char *text, mantra_guid *out) {
    size_t len = strlen(text);
    if (len == 38 && text[0] == '{' && text[37] == '}') {
        text++;
        len -= 2;
    }
    if (len != 36)
        return -1;
    uint8_t b[16];
    size_t k = 0;
    for (size_t i = 0; i < 36;) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (text[i] != '-')
                return -1;
            i++;
            continue;
        }
        int hi = hexval(text[i]), lo = hexval(text[i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        b[k++] = (uint8_t)(hi << 4 | lo);
        i += 2;
    }
    /* text order: data1 (big-endian digits), data2, data3, data4 bytes */
    out->data1 = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
    out->data2 = (uint16_t)(b[4] << 8 | b[5]);
    out->data3 = (uint16_t)(b[6] << 8 | b[7]);
    memcpy(out->data4, b + 8, 8);
    return 0;
}

void mantra_manifest_guid_format(const mantra_guid *g, char out[37]) {
    snprintf(out, 37, "%08lx-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x", (unsigned long)g->data1,
             (unsigned)g->data2, (unsigned)g->data3, g->data4[0], g->data4[1], g->data4[2], g->data4[3],
             g->data4[4], g->data4[5], g->data4[6], g->data4[7]);
}

/* ---- lookups ------------------------------------------------------------------------------------- */

static int cmp_provider_name(const void *a, const void *b) {
    const mantra_manifest_provider *x = *(const mantra_manifest_provider *const *)a;
    const mantra_manifest_provider *y = *(const mantra_manifest_provider *const *)b;
    return strcmp(x->name, y->name);
}

static int cmp_provider_guid(const void *a, const void *b) {
    const mantra_manifest_provider *x = *(const mantra_manifest_provider *const *)a;
    const mantra_manifest_provider *y = *(const mantra_manifest_provider *const *)b;
    return mf_guid_cmp(&x->guid, &y->guid);
}

int mf_build_indexes(mantra_manifest *m) {
    size_t n = m->provider_count;
    const mantra_manifest_provider **by_name = cm_arena_alloc(&m->arena, (n ? n : 1) * sizeof *by_name);
    const mantra_manifest_provider **by_guid = cm_arena_alloc(&m->arena, (n ? n : 1) * sizeof *by_guid);
    if (by_name == NULL || by_guid == NULL)
        return MANTRA_ENOMEM;
    for (size_t i = 0; i < n; i++)
        by_name[i] = by_guid[i] = &m->providers[i];
    qsort(by_name, n, sizeof *by_name, cmp_provider_name);
    qsort(by_guid, n, sizeof *by_guid, cmp_provider_guid);
    m->by_name = by_name;
    m->by_guid = by_guid;
    return 0;
}

void mantra_manifest_free(mantra_manifest *m) {
    if (m == NULL)
        return;
    cm_arena arena = m->arena; /* m lives in its own arena */
    cm_arena_free(&arena);
}

size_t mantra_manifest_memory_size(const mantra_manifest *m) { return m->arena.total; }
uint32_t mantra_manifest_provider_count(const mantra_manifest *m) { return m->provider_count; }
uint32_t mantra_manifest_event_count(const mantra_manifest *m) { return m->event_count; }
uint32_t mantra_manifest_pgo_kind_count(const mantra_manifest *m) { return m->pgo_kind_count; }

const mantra_manifest_provider *mantra_manifest_provider_at(const mantra_manifest *m, uint32_t index) {
    return index < m->provider_count ? &m->providers[index] : NULL;
}

const mantra_manifest_pgo_kind *mantra_manifest_pgo_kind_at(const mantra_manifest *m, uint32_t index) {
    return index < m->pgo_kind_count ? &m->pgo_kinds[index] : NULL;
}

const mantra_manifest_provider *mantra_manifest_find_provider(const mantra_manifest *m, const char *name) {
    size_t lo = 0, hi = m->provider_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(m->by_name[mid]->name, name);
        if (c == 0)
            return m->by_name[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

const mantra_manifest_provider *mantra_manifest_find_provider_by_guid(const mantra_manifest *m,
                                                                      const mantra_guid *guid) {
    size_t lo = 0, hi = m->provider_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = mf_guid_cmp(&m->by_guid[mid]->guid, guid);
        if (c == 0)
            return m->by_guid[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

const mantra_manifest_event *mantra_manifest_find_event(const mantra_manifest_provider *p, uint32_t id,
                                                        uint32_t version) {
    if (p == NULL)
        return NULL;
    uint64_t key = (uint64_t)id << 8 | version;
    if (version > 0xFF)
        return NULL;
    size_t lo = 0, hi = p->event_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const mantra_manifest_event *e = p->events_by_key[mid];
        uint64_t k = (uint64_t)e->id << 8 | e->version;
        if (k == key)
            return e;
        if (k < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

const mantra_manifest_map *mantra_manifest_find_map(const mantra_manifest_provider *p, const char *name) {
    for (uint32_t i = 0; p != NULL && i < p->map_count; i++)
        if (strcmp(p->maps[i].name, name) == 0)
            return &p->maps[i];
    return NULL;
}

const mantra_manifest_template *mantra_manifest_find_template(const mantra_manifest_provider *p,
                                                              const char *name) {
    for (uint32_t i = 0; p != NULL && i < p->template_count; i++)
        if (strcmp(p->templates[i].name, name) == 0)
            return &p->templates[i];
    return NULL;
}

/* ---- maps ---------------------------------------------------------------------------------------- */

const char *mantra_manifest_map_lookup(const mantra_manifest_map *map, uint64_t value) {
    size_t lo = 0, hi = map->entry_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint64_t v = map->entries[mid].value;
        if (v == value)
            return map->entries[mid].message;
        if (v < value)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* Appends text at *len (snprintf-like accounting). */
static void put(char *buf, size_t size, size_t *len, const char *text) {
    size_t n = strlen(text);
    if (*len < size) {
        size_t room = size - *len - 1;
        memcpy(buf + *len, text, n < room ? n : room);
        buf[*len + (n < room ? n : room)] = '\0';
    }
    *len += n;
}

size_t mantra_manifest_map_format(const mantra_manifest_map *map, uint64_t value, char *buf, size_t size) {
    size_t len = 0;
    if (size > 0)
        buf[0] = '\0';
    if (!map->is_bitmap || value == 0) {
        const char *name = mantra_manifest_map_lookup(map, value);
        if (name != NULL)
            put(buf, size, &len, name);
        return len;
    }
    uint64_t rest = value;
    int any = 0;
    for (uint32_t i = 0; i < map->entry_count; i++) {
        uint64_t v = map->entries[i].value;
        if (v != 0 && (value & v) == v) {
            if (any)
                put(buf, size, &len, "|");
            put(buf, size, &len, map->entries[i].message);
            rest &= ~v;
            any = 1;
        }
    }
    if (!any)
        return 0; /* buf is still "" */
    if (rest != 0) {
        char hex[24];
        snprintf(hex, sizeof hex, "|0x%llx", (unsigned long long)rest);
        put(buf, size, &len, hex);
    }
    return len;
}
