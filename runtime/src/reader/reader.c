/* Streaming nettrace reader: V4/V5 FastSerialization objects (nettrace-format.md §2-§7) and V6
 * blocks (§8). One block is held in memory at a time; rows are decoded on demand. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mantra/decode.h"
#include "mantra/manifest.h"
#include "common/varint-internal.h"
#include "platform/platform-internal.h"
#include "reader-internal.h"

#define DEFAULT_MAX_BLOCK (64u << 20)
#define READ_CHUNK (1u << 20)

enum { IN_NONE, IN_FD, IN_MEM };
enum { ST_OBJECTS, ST_ROWS, ST_END, ST_ERROR };
enum { BLK_EVENT, BLK_METADATA };

typedef struct stack_ref {
    size_t off;
    size_t size;
} stack_ref;

typedef struct label_list {
    mantra_guid activity, related;
    uint8_t has_activity, has_related, has_opcode, has_level, has_version, has_keywords;
    uint8_t opcode, level, version;
    uint64_t keywords;
} label_list;

typedef struct row_state {
    uint32_t metadata_id;
    uint32_t sequence;
    uint64_t capture_thread;
    uint32_t processor;
    uint64_t thread;
    uint32_t stack_id;
    int64_t timestamp;
    mantra_guid activity, related;
    uint32_t label_list;
    uint32_t payload_size;
} row_state;

struct mantra_reader {
    mantra_reader_options opt;
    /* input */
    int in_kind;
    int fd;
    int own_fd;
    uint8_t *buf;
    size_t cap, pos, end;
    uint64_t base; /* stream offset of buf[0] */
    int eof;
    /* state */
    int opened;
    int state;
    int err_code;
    uint64_t err_off;
    char err[512];
    int complete;
    int v6;
    mantra_trace_info info;
    mantra_reader_stats stats;
    /* providers registered for minimal metadata */
    const mantra_provider_desc **providers;
    size_t nproviders;
    /* manifests loaded at run time, and the field descriptions made for their events */
    const mantra_manifest **manifests;
    size_t nmanifests;
    cm_map manifest_fields; /* manifest event -> rd_mfields* */
    /* metadata: id -> mantra_trace_metadata* (kept until free) */
    cm_arena arena;
    cm_map meta;
    /* stacks of the current sequence-point region */
    cm_map stacks; /* id -> index in stack_refs */
    stack_ref *stack_refs;
    size_t nstack, capstack;
    uint8_t *stack_data;
    size_t stack_len, stack_cap;
    /* per-capture-thread sequence numbers (dropped-event accounting) */
    cm_map seq;
    uint64_t cur_thread;
    int have_cur_thread;
    /* V6 */
    cm_map threads;    /* index -> OS thread id */
    cm_map labels;     /* id -> index in label_lists */
    label_list *label_lists;
    size_t nlabels, caplabels;
    /* current block */
    int blk_kind;
    const uint8_t *blk;
    size_t blk_len, blk_pos;
    uint64_t blk_off;  /* stream offset of blk[0] */
    int compressed;
    int first_row;
    row_state rs;
    mantra_trace_event cur;
    rd_order *order;
};

/* ---------------------------------------------------------------------------------------- */

static int set_err(mantra_reader *r, int code, uint64_t off, const char *fmt, ...) {
    va_list ap;
    int n = snprintf(r->err, sizeof r->err, "offset %llu: ", (unsigned long long)off);
    va_start(ap, fmt);
    if (n > 0 && (size_t)n < sizeof r->err)
        vsnprintf(r->err + n, sizeof r->err - (size_t)n, fmt, ap);
    va_end(ap);
    r->err_code = code;
    r->err_off = off;
    r->state = ST_ERROR;
    return code;
}

mantra_reader *mantra_reader_new(const mantra_reader_options *options) {
    mantra_reader *r = calloc(1, sizeof *r);
    if (r == NULL)
        return NULL;
    if (options)
        r->opt = *options;
    if (r->opt.max_block_size == 0)
        r->opt.max_block_size = DEFAULT_MAX_BLOCK;
    r->fd = -1;
    if (r->opt.flags & MANTRA_READER_SORTED) {
        r->order = rd_order_new();
        if (r->order == NULL) {
            free(r);
            return NULL;
        }
    }
    return r;
}

void mantra_reader_free(mantra_reader *r) {
    if (r == NULL)
        return;
    if (r->in_kind == IN_FD) {
        free(r->buf);
        if (r->own_fd)
            mantra_pal_close(r->fd, NULL, 0);
    }
    cm_arena_free(&r->arena);
    cm_map_free(&r->meta);
    cm_map_free(&r->stacks);
    cm_map_free(&r->seq);
    cm_map_free(&r->threads);
    cm_map_free(&r->labels);
    free(r->stack_refs);
    free(r->stack_data);
    free(r->label_lists);
    free(r->providers);
    free(r->manifests);
    cm_map_free(&r->manifest_fields);
    rd_order_free(r->order);
    free(r);
}

int mantra_reader_add_provider(mantra_reader *r, const mantra_provider_desc *provider) {
    if (r == NULL || provider == NULL)
        return MANTRA_EINVAL;
    const mantra_provider_desc **p = realloc(r->providers, (r->nproviders + 1) * sizeof *p);
    if (p == NULL)
        return MANTRA_ENOMEM;
    p[r->nproviders++] = provider;
    r->providers = p;
    return 0;
}

int mantra_reader_add_manifest(mantra_reader *r, const mantra_manifest *manifest) {
    if (r == NULL || manifest == NULL)
        return MANTRA_EINVAL;
    const mantra_manifest **p = realloc(r->manifests, (r->nmanifests + 1) * sizeof *p);
    if (p == NULL)
        return MANTRA_ENOMEM;
    p[r->nmanifests++] = manifest;
    r->manifests = p;
    return 0;
}

/* ---- input ---------------------------------------------------------------------------- */

static uint64_t in_offset(const mantra_reader *r) { return r->base + r->pos; }

/* Makes n bytes available at buf + pos: 1 when they are, 0 when the input ends first, < 0 on error. */
static int in_ensure(mantra_reader *r, size_t n) {
    if (r->end - r->pos >= n)
        return 1;
    if (r->in_kind != IN_FD)
        return 0;
    if (r->pos > 0) {
        memmove(r->buf, r->buf + r->pos, r->end - r->pos);
        r->base += r->pos;
        r->end -= r->pos;
        r->pos = 0;
    }
    if (n > r->cap) {
        size_t ncap = r->cap ? r->cap : READ_CHUNK;
        while (ncap < n)
            ncap *= 2;
        uint8_t *b = realloc(r->buf, ncap);
        if (b == NULL)
            return set_err(r, MANTRA_ENOMEM, in_offset(r), "out of memory (buffer of %zu bytes)", ncap);
        r->buf = b;
        r->cap = ncap;
    }
    while (r->end < n && !r->eof) {
        char why[160];
        int64_t k = mantra_pal_read(r->fd, r->buf + r->end, r->cap - r->end, why, sizeof why);
        if (k < 0)
            return set_err(r, MANTRA_EIO, r->base + r->end, "read error: %s", why);
        if (k == 0)
            r->eof = 1;
        r->end += (size_t)k;
    }
    return r->end - r->pos >= n;
}

static size_t in_avail(const mantra_reader *r) { return r->end - r->pos; }

/* ---- header ----------------------------------------------------------------------------- */

static const char fs_sig[] = "!FastSerialization.1";

static int parse_trace_payload_v4(mantra_reader *r, const uint8_t *p) {
    for (int i = 0; i < 8; i++)
        r->info.sync_time_utc[i] = (int16_t)mantra_load_u16(p + 2 * i);
    r->info.sync_time_qpc = (int64_t)mantra_load_u64(p + 16);
    r->info.qpc_frequency = (int64_t)mantra_load_u64(p + 24);
    r->info.pointer_size = mantra_load_u32(p + 32);
    r->info.process_id = mantra_load_u32(p + 36);
    r->info.processor_count = mantra_load_u32(p + 40);
    r->info.expected_cpu_sampling_rate = mantra_load_u32(p + 44);
    if (r->info.pointer_size != 4 && r->info.pointer_size != 8)
        return set_err(r, MANTRA_EFORMAT, in_offset(r) + 32, "pointer size %u in the Trace object (expected 4 or 8)",
                       r->info.pointer_size);
    return 0;
}

/* Reads a FastSerialization type header (after the object's 0x05): 05 01 ver minver len name 06.
 * name receives up to 63 characters. */
static int read_type_header(mantra_reader *r, uint32_t *version, char *name, size_t name_cap) {
    uint64_t off = in_offset(r);
    int rc = in_ensure(r, 15);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return set_err(r, MANTRA_ETRUNCATED, off - 1, "input ends inside an object header (incomplete trace)");
    const uint8_t *p = r->buf + r->pos;
    if (p[0] != 0x05 || p[1] != 0x01)
        return set_err(r, MANTRA_EFORMAT, off, "expected a type header (05 01), found %02x %02x", p[0], p[1]);
    *version = mantra_load_u32(p + 2);
    uint32_t len = mantra_load_u32(p + 10);
    if (len > 38)
        return set_err(r, MANTRA_EFORMAT, off + 10, "object type name length %u (at most 38 expected)", len);
    rc = in_ensure(r, 15 + (size_t)len);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return set_err(r, MANTRA_ETRUNCATED, off - 1, "input ends inside an object header (incomplete trace)");
    p = r->buf + r->pos;
    size_t k = len < name_cap - 1 ? len : name_cap - 1;
    memcpy(name, p + 14, k);
    name[k] = '\0';
    if (p[14 + len] != 0x06)
        return set_err(r, MANTRA_EFORMAT, off + 14 + len, "expected EndObject (06) after the type name, found %02x",
                       p[14 + len]);
    for (uint32_t i = 0; i < len; i++)
        if (p[14 + i] < 0x20 || p[14 + i] > 0x7e)
            return set_err(r, MANTRA_EFORMAT, off + 14, "object type name is not printable ASCII");
    r->pos += 15 + len;
    return 0;
}

static int open_v4(mantra_reader *r) {
    /* "Nettrace" + int32 20 + "!FastSerialization.1" */
    int rc = in_ensure(r, 24);
    if (rc < 0)
        return rc;
    if (rc == 0 || memcmp(r->buf + r->pos + 4, fs_sig, 20) != 0 || mantra_load_u32(r->buf + r->pos) != 20)
        return set_err(r, rc == 0 ? MANTRA_ETRUNCATED : MANTRA_EFORMAT, 8,
                       "expected the FastSerialization header (int32 20, \"!FastSerialization.1\")");
    r->pos += 24;
    rc = in_ensure(r, 1);
    if (rc < 0)
        return rc;
    if (rc == 0 || r->buf[r->pos] != 0x05)
        return set_err(r, rc == 0 ? MANTRA_ETRUNCATED : MANTRA_EFORMAT, in_offset(r),
                       "expected the Trace object (BeginPrivateObject 05)");
    r->pos++;
    uint32_t version;
    char name[64];
    rc = read_type_header(r, &version, name, sizeof name);
    if (rc < 0)
        return rc;
    if (strcmp(name, "Trace") != 0)
        return set_err(r, MANTRA_EFORMAT, in_offset(r), "first object is \"%s\" (expected \"Trace\")", name);
    if (version != 4)
        return set_err(r, MANTRA_EUNSUPPORTED, in_offset(r),
                       "Trace object version %u is not supported (nettrace V4/V5 files have version 4)", version);
    rc = in_ensure(r, 49);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return set_err(r, MANTRA_ETRUNCATED, in_offset(r), "input ends inside the Trace object (48 bytes expected)");
    rc = parse_trace_payload_v4(r, r->buf + r->pos);
    if (rc < 0)
        return rc;
    if (r->buf[r->pos + 48] != 0x06)
        return set_err(r, MANTRA_EFORMAT, in_offset(r) + 48, "expected EndObject (06) after the Trace object, found %02x",
                       r->buf[r->pos + 48]);
    r->pos += 49;
    r->info.format_version = 4;
    return 0;
}

static int open_v6(mantra_reader *r) {
    uint64_t off = in_offset(r);
    int rc = in_ensure(r, 4);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return set_err(r, MANTRA_ETRUNCATED, off, "input ends before the Trace block");
    uint32_t h = mantra_load_u32(r->buf + r->pos);
    uint32_t size = h & 0xFFFFFF, kind = h >> 24;
    if (kind != 1)
        return set_err(r, MANTRA_EFORMAT, off, "first block has kind %u (expected 1, Trace)", kind);
    rc = in_ensure(r, 4 + (size_t)size);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return set_err(r, MANTRA_ETRUNCATED, off, "Trace block truncated (%u bytes declared, %zu present)", size,
                       in_avail(r) - 4);
    const uint8_t *p = r->buf + r->pos + 4;
    if (size < 40)
        return set_err(r, MANTRA_EFORMAT, off + 4, "Trace block of %u bytes (at least 40 expected)", size);
    for (int i = 0; i < 8; i++)
        r->info.sync_time_utc[i] = (int16_t)mantra_load_u16(p + 2 * i);
    r->info.sync_time_qpc = (int64_t)mantra_load_u64(p + 16);
    r->info.qpc_frequency = (int64_t)mantra_load_u64(p + 24);
    r->info.pointer_size = mantra_load_u32(p + 32);
    uint32_t kvs = mantra_load_u32(p + 36);
    if (r->info.pointer_size != 4 && r->info.pointer_size != 8)
        return set_err(r, MANTRA_EFORMAT, off + 36, "pointer size %u in the Trace block (expected 4 or 8)",
                       r->info.pointer_size);
    if (kvs > (size - 40) / 2)
        return set_err(r, MANTRA_EFORMAT, off + 44, "%u key/value pairs do not fit in the Trace block", kvs);
    const char **keys = cm_arena_alloc(&r->arena, (kvs + 1) * sizeof(char *));
    const char **vals = cm_arena_alloc(&r->arena, (kvs + 1) * sizeof(char *));
    if (!keys || !vals)
        return set_err(r, MANTRA_ENOMEM, off, "out of memory");
    size_t pos = 40;
    for (uint32_t i = 0; i < kvs; i++) {
        size_t k = rd_v6_string(&r->arena, p + pos, size - pos, &keys[i]);
        if (k == 0)
            return set_err(r, MANTRA_EFORMAT, off + 4 + pos, "bad key string in the Trace block");
        pos += k;
        k = rd_v6_string(&r->arena, p + pos, size - pos, &vals[i]);
        if (k == 0)
            return set_err(r, MANTRA_EFORMAT, off + 4 + pos, "bad value string in the Trace block");
        pos += k;
        unsigned long v = strtoul(vals[i], NULL, 10);
        if (strcmp(keys[i], "HardwareThreadCount") == 0)
            r->info.processor_count = (uint32_t)v;
        else if (strcmp(keys[i], "ProcessId") == 0)
            r->info.process_id = (uint32_t)v;
        else if (strcmp(keys[i], "ExpectedCPUSamplingRate") == 0)
            r->info.expected_cpu_sampling_rate = (uint32_t)v;
    }
    r->info.kv_count = kvs;
    r->info.keys = keys;
    r->info.values = vals;
    r->pos += 4 + (size_t)size;
    r->info.format_version = 6;
    r->v6 = 1;
    r->stats.blocks++;
    return 0;
}

static int open_common(mantra_reader *r) {
    int rc = in_ensure(r, 8);
    if (rc < 0)
        return rc;
    const uint8_t *p = r->buf + r->pos;
    size_t avail = in_avail(r);
    if (rc == 1 && memcmp(p, "Nettrace", 8) == 0) {
        r->pos += 8;
        rc = in_ensure(r, 4);
        if (rc < 0)
            return rc;
        if (rc == 0)
            return set_err(r, MANTRA_ETRUNCATED, 8, "input ends after the \"Nettrace\" magic");
        uint32_t v = mantra_load_u32(r->buf + r->pos);
        if (v != 0) {
            rc = open_v4(r);
        } else {
            rc = in_ensure(r, 12);
            if (rc < 0)
                return rc;
            if (rc == 0)
                return set_err(r, MANTRA_ETRUNCATED, 12, "input ends inside the V6 version header");
            uint32_t major = mantra_load_u32(r->buf + r->pos + 4);
            if (major < 6)
                return set_err(r, MANTRA_EFORMAT, 12, "invalid nettrace version header (major version %u)", major);
            if (major > 6)
                return set_err(r, MANTRA_EUNSUPPORTED, 12,
                               "nettrace format version %u is not supported (versions 4 to 6 are)", major);
            r->pos += 12;
            rc = open_v6(r);
        }
    } else if (avail >= 24 && mantra_load_u32(p) == 20 && memcmp(p + 4, fs_sig, 20) == 0) {
        r->info.format_version = 3;
        return set_err(r, MANTRA_EUNSUPPORTED, 0,
                       "NetPerf format (version 3, no \"Nettrace\" magic) is not supported: mantra reads nettrace "
                       "V4, V5 and V6 traces (.NET Core 3.0 and later)");
    } else {
        return set_err(r, rc == 0 && avail < 8 ? MANTRA_ETRUNCATED : MANTRA_EFORMAT, 0,
                       "not a nettrace trace (expected the magic \"Nettrace\")");
    }
    if (rc < 0)
        return rc;
    r->stats.bytes_read = in_offset(r);
    r->state = ST_OBJECTS;
    return 0;
}

int mantra_reader_open_memory(mantra_reader *r, const void *data, size_t size) {
    if (r == NULL || r->opened || (data == NULL && size))
        return MANTRA_EINVAL;
    static const uint8_t empty[1];
    r->opened = 1;
    r->in_kind = IN_MEM;
    r->buf = data ? (uint8_t *)(uintptr_t)data : (uint8_t *)(uintptr_t)empty;
    r->cap = r->end = size;
    r->stats.total_bytes = size;
    return open_common(r);
}

int mantra_reader_open_fd(mantra_reader *r, int fd) {
    if (r == NULL || r->opened || fd < 0)
        return MANTRA_EINVAL;
    r->opened = 1;
    r->in_kind = IN_FD;
    r->fd = fd;
    uint64_t size;
    if (mantra_pal_file_size(fd, &size))
        r->stats.total_bytes = size;
    return open_common(r);
}

int mantra_reader_open_file(mantra_reader *r, const char *path) {
    if (r == NULL || r->opened || path == NULL)
        return MANTRA_EINVAL;
    int fd = mantra_pal_file_open_read(path, r->err, sizeof r->err);
    if (fd < 0) {
        r->opened = 1;
        r->err_code = MANTRA_EIO;
        r->state = ST_ERROR;
        return MANTRA_EIO;
    }
    int rc = mantra_reader_open_fd(r, fd);
    r->own_fd = 1;
    return rc;
}

/* ---- metadata, stacks, threads ------------------------------------------------------------ */

const mantra_trace_metadata *mantra_reader_metadata(const mantra_reader *r, uint32_t id) {
    uint64_t *v = cm_map_get(&r->meta, id);
    return v ? (const mantra_trace_metadata *)(uintptr_t)*v : NULL;
}

typedef struct rd_mfields {
    const mantra_field_desc *fields;
    uint32_t count;
} rd_mfields;

/* Fields from the first manifest that defines (provider, event id, version). */
/* Metadata fields that are a strict prefix (by name) of the manifest's: the writer described only
 * the fields before its first counted array, binary, struct or AnsiString, which nettrace metadata
 * cannot express (mantra's MANTRA_EVENT_PARTIAL_METADATA events). */
static int is_partial_of(const mantra_trace_metadata *m, const rd_mfields *mf) {
    if (mf->count <= m->field_count)
        return 0;
    for (uint32_t i = 0; i < m->field_count; i++)
        if (strcmp(m->fields[i].name, mf->fields[i].name) != 0)
            return 0;
    return 1;
}

static int apply_manifest(mantra_reader *r, mantra_trace_metadata *m) {
    if (m->fields_invalid)
        return 0;
    for (size_t i = 0; i < r->nmanifests; i++) {
        const mantra_manifest_provider *p = NULL;
        if (m->has_provider_guid)
            p = mantra_manifest_find_provider_by_guid(r->manifests[i], &m->provider_guid);
        if (p == NULL)
            p = mantra_manifest_find_provider(r->manifests[i], m->provider);
        const mantra_manifest_event *e = p ? mantra_manifest_find_event(p, m->event_id, m->version) : NULL;
        if (e == NULL)
            continue;
        uint64_t key = (uint64_t)(uintptr_t)e;
        uint64_t *have = cm_map_get(&r->manifest_fields, key);
        const rd_mfields *mf;
        if (have) {
            mf = (const rd_mfields *)(uintptr_t)*have;
        } else {
            rd_mfields *n = cm_arena_alloc(&r->arena, sizeof *n);
            if (n == NULL || rd_manifest_fields(&r->arena, e, r->info.pointer_size, &n->fields, &n->count) < 0 ||
                cm_map_put(&r->manifest_fields, key, (uint64_t)(uintptr_t)n) < 0)
                return MANTRA_ENOMEM;
            mf = n;
        }
        if (m->field_count != 0 && !is_partial_of(m, mf))
            return 0; /* the trace describes the whole event: it wins */
        m->fields = mf->fields;
        m->field_count = mf->count;
        m->manifest_event = e;
        m->fields_from_manifest = 1;
        return 0;
    }
    return 0;
}

static void apply_registry(mantra_reader *r, mantra_trace_metadata *m) {
    if (m->field_count != 0 || m->fields_invalid || m->fields_from_manifest)
        return;
    for (size_t i = 0; i < r->nproviders; i++) {
        const mantra_provider_desc *p = r->providers[i];
        if (p->name == NULL || strcmp(p->name, m->provider) != 0)
            continue;
        for (uint32_t j = 0; j < p->event_count; j++) {
            const mantra_event_desc *d = &p->events[j];
            if (d->id != m->event_id || d->version != m->version || d->metadata == NULL)
                continue;
            mantra_trace_metadata tmp;
            memset(&tmp, 0, sizeof tmp);
            const char *what = NULL;
            if (rd_parse_metadata_v5_blob(&r->arena, d->metadata, d->metadata_size, &tmp, &what) == 0 &&
                !tmp.fields_invalid && tmp.field_count) {
                m->fields = tmp.fields;
                m->field_count = tmp.field_count;
                m->fields_from_registry = 1;
            }
            return;
        }
    }
}

static int add_metadata(mantra_reader *r, mantra_trace_metadata *m, uint64_t off) {
    if (m->id == 0)
        return set_err(r, MANTRA_EFORMAT, off, "metadata record defines id 0");
    if (r->v6 && cm_map_get(&r->meta, m->id))
        return set_err(r, MANTRA_EFORMAT, off, "metadata id %u defined twice", m->id);
    if (apply_manifest(r, m) < 0)
        return set_err(r, MANTRA_ENOMEM, off, "out of memory");
    apply_registry(r, m);
    if (cm_map_put(&r->meta, m->id, (uint64_t)(uintptr_t)m) < 0)
        return set_err(r, MANTRA_ENOMEM, off, "out of memory");
    r->stats.metadata++;
    return 0;
}

static void clear_region(mantra_reader *r) {
    cm_map_clear(&r->stacks);
    r->nstack = 0;
    r->stack_len = 0;
    cm_map_clear(&r->labels);
    r->nlabels = 0;
}

static int grow(void **p, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap * 2 : 64;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, n * elem);
    if (q == NULL)
        return MANTRA_ENOMEM;
    *p = q;
    *cap = n;
    return 0;
}

static int parse_stack_block(mantra_reader *r, const uint8_t *p, size_t n, uint64_t off) {
    if (n < 8)
        return set_err(r, MANTRA_EFORMAT, off, "StackBlock of %zu bytes (at least 8 expected)", n);
    uint32_t first = mantra_load_u32(p);
    size_t pos = 8;
    uint32_t id = first;
    uint32_t ps = r->info.pointer_size;
    while (pos < n) {
        if (n - pos < 4)
            return set_err(r, MANTRA_EFORMAT, off + pos, "stack size field cut by the end of the StackBlock");
        uint32_t size = mantra_load_u32(p + pos);
        pos += 4;
        if (size > n - pos)
            return set_err(r, MANTRA_EFORMAT, off + pos - 4, "stack of %u bytes exceeds the StackBlock", size);
        if (size % ps != 0)
            return set_err(r, MANTRA_EFORMAT, off + pos - 4, "stack of %u bytes is not a multiple of the pointer size %u",
                           size, ps);
        if (grow((void **)&r->stack_refs, &r->capstack, r->nstack + 1, sizeof *r->stack_refs) < 0 ||
            grow((void **)&r->stack_data, &r->stack_cap, r->stack_len + size + 1, 1) < 0 ||
            cm_map_put(&r->stacks, id, r->nstack) < 0)
            return set_err(r, MANTRA_ENOMEM, off + pos, "out of memory");
        memcpy(r->stack_data + r->stack_len, p + pos, size);
        r->stack_refs[r->nstack].off = r->stack_len;
        r->stack_refs[r->nstack].size = size;
        r->nstack++;
        r->stack_len += size;
        pos += size;
        id++;
        r->stats.stacks++;
    }
    return 0;
}

/* TraceEvent's dropped-event rule (§4.2). */
static void note_seq(mantra_reader *r, uint64_t *last, uint32_t expected) {
    if (r->v6 || *last != 0) {
        int32_t d = (int32_t)(expected - (uint32_t)*last);
        if (d > 0)
            r->stats.dropped += (uint64_t)d;
    }
}

static uint64_t *thread_seq(mantra_reader *r, uint64_t key, uint32_t init) {
    uint64_t *v = cm_map_get(&r->seq, key);
    if (v)
        return v;
    if (cm_map_put(&r->seq, key, init) < 0)
        return NULL;
    return cm_map_get(&r->seq, key);
}

static int parse_sp_block(mantra_reader *r, const uint8_t *p, size_t n, uint64_t off) {
    size_t pos;
    uint32_t count, flags = 0;
    if (!r->v6) {
        if (n < 12)
            return set_err(r, MANTRA_EFORMAT, off, "SPBlock of %zu bytes (at least 12 expected)", n);
        count = mantra_load_u32(p + 8);
        if ((n - 12) / 12 < count || n != 12 + (size_t)count * 12)
            return set_err(r, MANTRA_EFORMAT, off, "SPBlock of %zu bytes does not hold %u threads (%zu bytes expected)",
                           n, count, 12 + (size_t)count * 12);
        pos = 12;
    } else {
        if (n < 16)
            return set_err(r, MANTRA_EFORMAT, off, "SequencePoint block of %zu bytes (at least 16 expected)", n);
        flags = mantra_load_u32(p + 8);
        count = mantra_load_u32(p + 12);
        pos = 16;
    }
    if (r->order && rd_order_flush(r->order) < 0)
        return set_err(r, MANTRA_ENOMEM, off, "out of memory");
    for (uint32_t i = 0; i < count; i++) {
        uint64_t key, s;
        if (!r->v6) {
            key = mantra_load_u64(p + pos);
            s = mantra_load_u32(p + pos + 8);
            pos += 12;
        } else {
            size_t k = mantra_varint_get(p + pos, n - pos, MANTRA_VARINT64_MAX_BYTES, &key);
            if (k == 0)
                return set_err(r, MANTRA_EFORMAT, off + pos, "bad thread index varint in the SequencePoint block");
            pos += k;
            k = mantra_varint_get(p + pos, n - pos, MANTRA_VARINT32_MAX_BYTES, &s);
            if (k == 0)
                return set_err(r, MANTRA_EFORMAT, off + pos, "bad sequence number varint in the SequencePoint block");
            pos += k;
        }
        uint64_t *last = thread_seq(r, key, (uint32_t)s);
        if (last == NULL)
            return set_err(r, MANTRA_ENOMEM, off, "out of memory");
        note_seq(r, last, (uint32_t)s);
        *last = (uint32_t)s;
    }
    if (r->v6 && pos != n)
        return set_err(r, MANTRA_EFORMAT, off + pos, "%zu unexpected bytes at the end of the SequencePoint block",
                       n - pos);
    if (flags & 1) {
        cm_map_clear(&r->threads);
        cm_map_clear(&r->seq);
    }
    if (flags & 2)
        cm_map_clear(&r->meta);
    clear_region(r);
    r->have_cur_thread = 0;
    r->stats.sequence_points++;
    return 0;
}

static int parse_metadata_block_v6(mantra_reader *r, const uint8_t *p, size_t n, uint64_t off) {
    if (n < 2)
        return set_err(r, MANTRA_EFORMAT, off, "Metadata block of %zu bytes", n);
    size_t pos = 2 + (size_t)mantra_load_u16(p);
    if (pos > n)
        return set_err(r, MANTRA_EFORMAT, off, "Metadata block header larger than the block");
    while (pos < n) {
        if (n - pos < 2)
            return set_err(r, MANTRA_EFORMAT, off + pos, "metadata row size cut by the end of the block");
        size_t rs = mantra_load_u16(p + pos);
        pos += 2;
        if (rs > n - pos)
            return set_err(r, MANTRA_EFORMAT, off + pos - 2, "metadata row of %zu bytes exceeds the block", rs);
        mantra_trace_metadata *m;
        const char *what = NULL;
        int rc = rd_parse_metadata_v6(&r->arena, p + pos, rs, &m, &what);
        if (rc < 0)
            return set_err(r, rc, off + pos, "bad metadata row: %s", what ? what : "?");
        rc = add_metadata(r, m, off + pos);
        if (rc < 0)
            return rc;
        pos += rs;
    }
    return 0;
}

static size_t skip_str8(const uint8_t *p, size_t n) {
    uint64_t len;
    size_t k = mantra_varint_get(p, n, MANTRA_VARINT32_MAX_BYTES, &len);
    if (k == 0 || len > n - k)
        return 0;
    return k + (size_t)len;
}

static int parse_thread_block(mantra_reader *r, const uint8_t *p, size_t n, uint64_t off) {
    size_t pos = 0;
    while (pos < n) {
        if (n - pos < 2)
            return set_err(r, MANTRA_EFORMAT, off + pos, "thread row size cut by the end of the block");
        size_t rs = mantra_load_u16(p + pos);
        size_t row = pos;
        pos += 2;
        if (rs > n - pos)
            return set_err(r, MANTRA_EFORMAT, off + row, "thread row of %zu bytes exceeds the block", rs);
        size_t end = pos + rs;
        uint64_t index, tid = 0, v;
        size_t k = mantra_varint_get(p + pos, end - pos, MANTRA_VARINT64_MAX_BYTES, &index);
        if (k == 0)
            return set_err(r, MANTRA_EFORMAT, off + pos, "bad thread index varint");
        pos += k;
        while (pos < end) {
            uint8_t kind = p[pos++];
            switch (kind) {
            case 1:
                k = skip_str8(p + pos, end - pos);
                break;
            case 2:
                k = mantra_varint_get(p + pos, end - pos, MANTRA_VARINT64_MAX_BYTES, &v);
                break;
            case 3:
                k = mantra_varint_get(p + pos, end - pos, MANTRA_VARINT64_MAX_BYTES, &tid);
                break;
            case 4:
                k = skip_str8(p + pos, end - pos);
                if (k) {
                    size_t k2 = skip_str8(p + pos + k, end - pos - k);
                    k = k2 ? k + k2 : 0;
                }
                break;
            default:
                return set_err(r, MANTRA_EFORMAT, off + pos - 1, "unknown thread row item kind %u", kind);
            }
            if (k == 0)
                return set_err(r, MANTRA_EFORMAT, off + pos, "bad value of thread row item kind %u", kind);
            pos += k;
        }
        if (cm_map_get(&r->threads, index))
            return set_err(r, MANTRA_EFORMAT, off + row, "thread index %llu declared twice",
                           (unsigned long long)index);
        if (cm_map_put(&r->threads, index, tid) < 0)
            return set_err(r, MANTRA_ENOMEM, off, "out of memory");
    }
    return 0;
}

static int parse_remove_thread_block(mantra_reader *r, const uint8_t *p, size_t n, uint64_t off) {
    size_t pos = 0;
    while (pos < n) {
        uint64_t index, s;
        size_t k = mantra_varint_get(p + pos, n - pos, MANTRA_VARINT64_MAX_BYTES, &index);
        if (k == 0)
            return set_err(r, MANTRA_EFORMAT, off + pos, "bad thread index varint in a RemoveThread block");
        size_t k2 = mantra_varint_get(p + pos + k, n - pos - k, MANTRA_VARINT32_MAX_BYTES, &s);
        if (k2 == 0)
            return set_err(r, MANTRA_EFORMAT, off + pos + k, "bad sequence number varint in a RemoveThread block");
        if (!cm_map_get(&r->threads, index))
            return set_err(r, MANTRA_EFORMAT, off + pos, "RemoveThread of unknown thread index %llu",
                           (unsigned long long)index);
        uint64_t *last = thread_seq(r, index, (uint32_t)s);
        if (last == NULL)
            return set_err(r, MANTRA_ENOMEM, off, "out of memory");
        note_seq(r, last, (uint32_t)s);
        cm_map_del(&r->seq, index);
        cm_map_del(&r->threads, index);
        pos += k + k2;
    }
    return 0;
}

static int parse_label_block(mantra_reader *r, const uint8_t *p, size_t n, uint64_t off) {
    if (n < 8)
        return set_err(r, MANTRA_EFORMAT, off, "LabelList block of %zu bytes (at least 8 expected)", n);
    uint32_t first = mantra_load_u32(p), count = mantra_load_u32(p + 4);
    size_t pos = 8;
    if (first == 0)
        return set_err(r, MANTRA_EFORMAT, off, "LabelList block with first index 0");
    for (uint32_t i = 0; i < count; i++) {
        label_list l;
        memset(&l, 0, sizeof l);
        for (;;) {
            if (pos >= n)
                return set_err(r, MANTRA_EFORMAT, off + pos, "label list %u cut by the end of the block", first + i);
            uint8_t kb = p[pos++];
            uint8_t kind = kb & 0x7f;
            size_t left = n - pos, k = 0;
            uint64_t v;
            switch (kind) {
            case 1:
            case 2:
                if (left < 16)
                    break;
                {
                    mantra_guid *g = kind == 1 ? &l.activity : &l.related;
                    g->data1 = mantra_load_u32(p + pos);
                    g->data2 = mantra_load_u16(p + pos + 4);
                    g->data3 = mantra_load_u16(p + pos + 6);
                    memcpy(g->data4, p + pos + 8, 8);
                    if (kind == 1)
                        l.has_activity = 1;
                    else
                        l.has_related = 1;
                }
                k = 16;
                break;
            case 3:
                k = left >= 16 ? 16 : 0;
                break;
            case 4:
            case 8:
                if (left >= 8) {
                    k = 8;
                    if (kind == 8) {
                        l.keywords = mantra_load_u64(p + pos);
                        l.has_keywords = 1;
                    }
                }
                break;
            case 5:
                k = skip_str8(p + pos, left);
                if (k) {
                    size_t k2 = skip_str8(p + pos + k, left - k);
                    k = k2 ? k + k2 : 0;
                }
                break;
            case 6:
                k = skip_str8(p + pos, left);
                if (k) {
                    size_t k2 = mantra_varint_get(p + pos + k, left - k, MANTRA_VARINT64_MAX_BYTES, &v);
                    k = k2 ? k + k2 : 0;
                }
                break;
            case 7:
            case 9:
            case 10:
                if (left >= 1) {
                    k = 1;
                    if (kind == 7) {
                        l.opcode = p[pos];
                        l.has_opcode = 1;
                    } else if (kind == 9) {
                        l.level = p[pos];
                        l.has_level = 1;
                    } else {
                        l.version = p[pos];
                        l.has_version = 1;
                    }
                }
                break;
            default:
                return set_err(r, MANTRA_EFORMAT, off + pos - 1, "unknown label kind %u", kind);
            }
            if (k == 0)
                return set_err(r, MANTRA_EFORMAT, off + pos, "bad value of label kind %u", kind);
            pos += k;
            if (kb & 0x80)
                break;
        }
        if (grow((void **)&r->label_lists, &r->caplabels, r->nlabels + 1, sizeof *r->label_lists) < 0 ||
            cm_map_put(&r->labels, (uint64_t)first + i, r->nlabels) < 0)
            return set_err(r, MANTRA_ENOMEM, off, "out of memory");
        r->label_lists[r->nlabels++] = l;
    }
    if (pos != n)
        return set_err(r, MANTRA_EFORMAT, off + pos, "%zu unexpected bytes after the label lists", n - pos);
    return 0;
}

/* ---- rows --------------------------------------------------------------------------------- */

static int start_rows(mantra_reader *r, int kind, const uint8_t *p, size_t n, uint64_t off) {
    if (n < 20)
        return set_err(r, MANTRA_EFORMAT, off, "%s of %zu bytes (a 20-byte header expected)",
                       kind == BLK_EVENT ? "EventBlock" : "MetadataBlock", n);
    uint16_t hs = mantra_load_u16(p);
    if (hs < 20 || hs > n)
        return set_err(r, MANTRA_EFORMAT, off, "block header size %u (20..%zu expected)", hs, n);
    r->compressed = mantra_load_u16(p + 2) & 1;
    r->blk_kind = kind;
    r->blk = p;
    r->blk_len = n;
    r->blk_pos = hs;
    r->blk_off = off;
    memset(&r->rs, 0, sizeof r->rs);
    r->first_row = 1;
    r->state = ST_ROWS;
    return 0;
}

#define ROW_VAR(dst, max, what)                                                                    \
    do {                                                                                           \
        uint64_t v_;                                                                               \
        size_t k_ = mantra_varint_get(p + pos, n - pos, (max), &v_);                               \
        if (k_ == 0)                                                                               \
            return set_err(r, MANTRA_EFORMAT, r->blk_off + pos, "bad %s varint in a row", (what)); \
        pos += k_;                                                                                 \
        (dst) = v_;                                                                                \
    } while (0)

static void load_guid(mantra_guid *g, const uint8_t *p) {
    g->data1 = mantra_load_u32(p);
    g->data2 = mantra_load_u16(p + 4);
    g->data3 = mantra_load_u16(p + 6);
    memcpy(g->data4, p + 8, 8);
}

/* Decodes the next row of the current block into r->rs; returns 1 and sets *payload_pos. */
static int read_row(mantra_reader *r, size_t *payload_pos, int *sorted) {
    const uint8_t *p = r->blk;
    size_t n = r->blk_len, pos = r->blk_pos;
    row_state *s = &r->rs;
    if (r->compressed) {
        uint8_t f = p[pos++];
        uint64_t v;
        if (f & 0x01) {
            ROW_VAR(v, MANTRA_VARINT32_MAX_BYTES, "metadata id");
            s->metadata_id = (uint32_t)v;
        }
        if (f & 0x02) {
            ROW_VAR(v, MANTRA_VARINT32_MAX_BYTES, "sequence delta");
            s->sequence = s->sequence + (uint32_t)v + 1u;
            ROW_VAR(v, MANTRA_VARINT64_MAX_BYTES, "capture thread");
            s->capture_thread = v;
            ROW_VAR(v, MANTRA_VARINT32_MAX_BYTES, "processor number");
            s->processor = (uint32_t)v;
        } else if (s->metadata_id != 0) {
            s->sequence++;
        }
        if (f & 0x04) {
            ROW_VAR(v, MANTRA_VARINT64_MAX_BYTES, "thread");
            s->thread = v;
        }
        if (f & 0x08) {
            ROW_VAR(v, MANTRA_VARINT32_MAX_BYTES, "stack id");
            s->stack_id = (uint32_t)v;
        }
        ROW_VAR(v, MANTRA_VARINT64_MAX_BYTES, "timestamp delta");
        s->timestamp = (int64_t)((uint64_t)s->timestamp + v);
        if (!r->v6) {
            if (f & 0x10) {
                if (n - pos < 16)
                    return set_err(r, MANTRA_EFORMAT, r->blk_off + pos, "activity id cut by the end of the block");
                load_guid(&s->activity, p + pos);
                pos += 16;
            }
            if (f & 0x20) {
                if (n - pos < 16)
                    return set_err(r, MANTRA_EFORMAT, r->blk_off + pos,
                                   "related activity id cut by the end of the block");
                load_guid(&s->related, p + pos);
                pos += 16;
            }
        } else if (f & 0x10) {
            ROW_VAR(v, MANTRA_VARINT32_MAX_BYTES, "label list id");
            s->label_list = (uint32_t)v;
        }
        *sorted = (f & 0x40) != 0;
        if (f & 0x80) {
            ROW_VAR(v, MANTRA_VARINT32_MAX_BYTES, "payload size");
            s->payload_size = (uint32_t)v;
        }
        if (s->payload_size > n - pos)
            return set_err(r, MANTRA_EFORMAT, r->blk_off + r->blk_pos,
                           "row payload of %u bytes exceeds the block (%zu bytes left)", s->payload_size, n - pos);
        *payload_pos = pos;
        r->blk_pos = pos + s->payload_size;
        return 1;
    }
    /* uncompressed */
    size_t hdr = r->v6 ? 48 : 76;
    if (n - pos < 4 + hdr)
        return set_err(r, MANTRA_EFORMAT, r->blk_off + pos, "uncompressed row header cut by the end of the block");
    uint32_t esize = mantra_load_u32(p + pos);
    const uint8_t *h = p + pos + 4;
    uint32_t id = mantra_load_u32(h);
    s->metadata_id = id & 0x7FFFFFFFu;
    *sorted = (id & 0x80000000u) == 0; /* bit 31 means NOT sorted (§3.3) */
    s->sequence = mantra_load_u32(h + 4);
    s->thread = mantra_load_u64(h + 8);
    s->capture_thread = mantra_load_u64(h + 16);
    s->processor = mantra_load_u32(h + 24);
    s->stack_id = mantra_load_u32(h + 28);
    s->timestamp = (int64_t)mantra_load_u64(h + 32);
    if (!r->v6) {
        load_guid(&s->activity, h + 40);
        load_guid(&s->related, h + 56);
        s->payload_size = mantra_load_u32(h + 72);
    } else {
        s->label_list = mantra_load_u32(h + 40);
        s->payload_size = mantra_load_u32(h + 44);
    }
    if (esize < hdr || esize > n - pos - 4 || s->payload_size > esize - hdr)
        return set_err(r, MANTRA_EFORMAT, r->blk_off + pos,
                       "uncompressed row size %u does not fit its header, payload (%u bytes) and block", esize,
                       s->payload_size);
    *payload_pos = pos + 4 + hdr;
    r->blk_pos = pos + 4 + esize;
    return 1;
}

/* Processes one row of the current block: 1 = an event is in r->cur, 0 = no event. */
static int next_row(mantra_reader *r) {
    uint64_t row_off = r->blk_off + r->blk_pos;
    size_t ppos = 0;
    int sorted = 0;
    int rc = read_row(r, &ppos, &sorted);
    if (rc < 0)
        return rc;
    row_state *s = &r->rs;
    const uint8_t *payload = r->blk + ppos;
    if (r->blk_kind == BLK_METADATA) {
        mantra_trace_metadata *m;
        const char *what = NULL;
        rc = rd_parse_metadata_v5(&r->arena, payload, s->payload_size, &m, &what);
        if (rc < 0)
            return set_err(r, rc, r->blk_off + ppos, "bad metadata record: %s", what ? what : "?");
        return add_metadata(r, m, r->blk_off + ppos) < 0 ? r->err_code : 0;
    }
    /* dropped-event accounting and the current capture thread, as TraceEvent (§4.1, §4.2) */
    uint64_t key = s->capture_thread;
    if (r->first_row || sorted || !r->have_cur_thread) {
        r->cur_thread = key;
        r->have_cur_thread = 1;
        r->first_row = 0;
    }
    uint64_t *last = thread_seq(r, r->cur_thread, s->sequence - 1u);
    if (last == NULL)
        return set_err(r, MANTRA_ENOMEM, row_off, "out of memory");
    note_seq(r, last, s->sequence - 1u);
    *last = s->sequence;

    uint64_t *mv = cm_map_get(&r->meta, s->metadata_id);
    if (mv == NULL)
        return set_err(r, MANTRA_EFORMAT, row_off, "event refers to metadata id %u, which no earlier metadata defines",
                       s->metadata_id);
    const mantra_trace_metadata *m = (const mantra_trace_metadata *)(uintptr_t)*mv;
    mantra_trace_event *e = &r->cur;
    memset(e, 0, sizeof *e);
    e->metadata = m;
    e->metadata_id = s->metadata_id;
    e->sequence = s->sequence;
    e->processor = s->processor;
    e->stack_id = s->stack_id;
    e->timestamp = s->timestamp;
    e->is_sorted = sorted;
    e->version = m->version;
    e->level = m->level;
    e->opcode = m->opcode;
    e->keywords = m->keywords;
    e->payload = payload;
    e->payload_size = s->payload_size;
    e->pointer_size = r->info.pointer_size;
    e->offset = row_off;
    if (m->fields_from_manifest)
        e->decode_status = rd_manifest_check(e);
    else if (m->fields_from_registry) {
        int rc = mantra_decode_payload(m->fields, m->field_count, payload, s->payload_size, e->pointer_size, NULL, NULL);
        e->decode_status = rc == 0 ? MANTRA_DECODE_OK : rc == 1 ? MANTRA_DECODE_TRAILING : MANTRA_DECODE_SHORT;
    }
    if (!r->v6) {
        e->thread_id = e->thread_index = s->thread;
        e->capture_thread_id = e->capture_thread_index = s->capture_thread;
        e->activity_id = s->activity;
        e->related_activity_id = s->related;
    } else {
        uint64_t *t = cm_map_get(&r->threads, s->thread);
        uint64_t *ct = cm_map_get(&r->threads, s->capture_thread);
        if (t == NULL || ct == NULL)
            return set_err(r, MANTRA_EFORMAT, row_off, "event refers to thread index %llu, which no Thread block defines",
                           (unsigned long long)(t == NULL ? s->thread : s->capture_thread));
        e->thread_index = s->thread;
        e->capture_thread_index = s->capture_thread;
        e->thread_id = *t;
        e->capture_thread_id = *ct;
        e->label_list_id = s->label_list;
        if (s->label_list != 0) {
            uint64_t *li = cm_map_get(&r->labels, s->label_list);
            if (li == NULL)
                return set_err(r, MANTRA_EFORMAT, row_off, "event refers to label list %u, which no LabelList block defines",
                               s->label_list);
            const label_list *l = &r->label_lists[*li];
            if (l->has_activity)
                e->activity_id = l->activity;
            if (l->has_related)
                e->related_activity_id = l->related;
            if (l->has_opcode)
                e->opcode = l->opcode;
            if (l->has_level)
                e->level = l->level;
            if (l->has_version)
                e->version = l->version;
            if (l->has_keywords)
                e->keywords = l->keywords;
        }
    }
    uint64_t *si = cm_map_get(&r->stacks, s->stack_id);
    if (si) {
        const stack_ref *sr = &r->stack_refs[*si];
        e->stack = r->stack_data + sr->off;
        e->stack_count = sr->size / r->info.pointer_size;
    }
    if (r->order) {
        if (rd_order_event(r->order, e, r->cur_thread) < 0)
            return set_err(r, MANTRA_ENOMEM, row_off, "out of memory");
        return 0;
    }
    return 1;
}

uint64_t mantra_trace_event_ip(const mantra_trace_event *ev, size_t i) {
    if (ev == NULL || i >= ev->stack_count)
        return 0;
    if (ev->pointer_size == 4)
        return mantra_load_u32(ev->stack + 4 * i);
    return mantra_load_u64(ev->stack + 8 * i);
}

/* ---- objects / blocks ----------------------------------------------------------------------- */

static int end_of_stream(mantra_reader *r) {
    r->complete = 1;
    r->state = ST_END;
    r->stats.bytes_read = in_offset(r);
    if (r->order && rd_order_flush(r->order) < 0)
        return set_err(r, MANTRA_ENOMEM, in_offset(r), "out of memory");
    return 0;
}

static int truncated_at_boundary(mantra_reader *r) {
    return set_err(r, MANTRA_ETRUNCATED, in_offset(r),
                   "input ends after a complete block but before the end-of-stream marker (incomplete trace)");
}

/* Reads and processes the next V4/V5 object. */
static int next_object_v4(mantra_reader *r) {
    uint64_t obj = in_offset(r);
    int rc = in_ensure(r, 1);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return truncated_at_boundary(r);
    uint8_t tag = r->buf[r->pos];
    if (tag == 0x01) {
        r->pos++;
        return end_of_stream(r);
    }
    if (tag != 0x05)
        return set_err(r, MANTRA_EFORMAT, obj, "expected a block object (tag 05) or the end-of-stream tag (01), found %02x",
                       tag);
    r->pos++;
    uint32_t version;
    char name[64];
    rc = read_type_header(r, &version, name, sizeof name);
    if (rc < 0)
        return rc;
    int kind;
    if (strcmp(name, "EventBlock") == 0)
        kind = 0;
    else if (strcmp(name, "MetadataBlock") == 0)
        kind = 1;
    else if (strcmp(name, "StackBlock") == 0)
        kind = 2;
    else if (strcmp(name, "SPBlock") == 0)
        kind = 3;
    else
        return set_err(r, MANTRA_EFORMAT, obj, "unknown object type \"%s\" (expected EventBlock, MetadataBlock, "
                       "StackBlock or SPBlock)", name);
    if (version > 2)
        return set_err(r, MANTRA_EUNSUPPORTED, obj, "%s version %u is not supported (at most 2)", name, version);
    uint64_t size_off = in_offset(r);
    rc = in_ensure(r, 4);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return set_err(r, MANTRA_ETRUNCATED, obj, "%s truncated: input ends in its block size field (incomplete trace)",
                       name);
    uint32_t bsize = mantra_load_u32(r->buf + r->pos);
    uint64_t after = size_off + 4;
    size_t pad = (size_t)((4 - (after & 3)) & 3);
    if (bsize > r->opt.max_block_size)
        return set_err(r, MANTRA_EFORMAT, size_off, "%s declares %u content bytes (more than the limit of %zu)", name,
                       bsize, r->opt.max_block_size);
    size_t need = 4 + pad + (size_t)bsize + 1;
    rc = in_ensure(r, need);
    if (rc < 0)
        return rc;
    if (rc == 0) {
        size_t have = in_avail(r);
        return set_err(r, MANTRA_ETRUNCATED, obj,
                       "%s truncated: it declares %u content bytes ending at offset %llu, the input ends at offset "
                       "%llu (incomplete trace)",
                       name, bsize, (unsigned long long)(after + pad + bsize), (unsigned long long)(size_off + have));
    }
    const uint8_t *content = r->buf + r->pos + 4 + pad;
    uint64_t coff = after + pad;
    if (content[bsize] != 0x06)
        return set_err(r, MANTRA_EFORMAT, coff + bsize, "expected EndObject (06) after the %s content, found %02x", name,
                       content[bsize]);
    r->pos += need;
    r->stats.bytes_read = in_offset(r);
    r->stats.blocks++;
    switch (kind) {
    case 0:
        return start_rows(r, BLK_EVENT, content, bsize, coff);
    case 1:
        return start_rows(r, BLK_METADATA, content, bsize, coff);
    case 2:
        return parse_stack_block(r, content, bsize, coff);
    default:
        return parse_sp_block(r, content, bsize, coff);
    }
}

static int next_block_v6(mantra_reader *r) {
    uint64_t off = in_offset(r);
    int rc = in_ensure(r, 4);
    if (rc < 0)
        return rc;
    if (rc == 0) {
        if (in_avail(r) == 0)
            return truncated_at_boundary(r);
        return set_err(r, MANTRA_ETRUNCATED, off, "input ends inside a block header (incomplete trace)");
    }
    uint32_t h = mantra_load_u32(r->buf + r->pos);
    uint32_t size = h & 0xFFFFFF, kind = h >> 24;
    rc = in_ensure(r, 4 + (size_t)size);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return set_err(r, MANTRA_ETRUNCATED, off,
                       "block of kind %u truncated: it declares %u content bytes ending at offset %llu, the input ends "
                       "at offset %llu (incomplete trace)",
                       kind, size, (unsigned long long)(off + 4 + size), (unsigned long long)(off + in_avail(r)));
    const uint8_t *content = r->buf + r->pos + 4;
    r->pos += 4 + (size_t)size;
    r->stats.bytes_read = in_offset(r);
    uint64_t coff = off + 4;
    if (kind == 0) {
        if (size != 0)
            return set_err(r, MANTRA_EFORMAT, off, "EndOfStream block with %u content bytes (0 expected)", size);
        return end_of_stream(r);
    }
    r->stats.blocks++;
    switch (kind) {
    case 1:
        return set_err(r, MANTRA_EFORMAT, off, "a second Trace block");
    case 2:
        return start_rows(r, BLK_EVENT, content, size, coff);
    case 3:
        return parse_metadata_block_v6(r, content, size, coff);
    case 4:
        return parse_sp_block(r, content, size, coff);
    case 5:
        return parse_stack_block(r, content, size, coff);
    case 6:
        return parse_thread_block(r, content, size, coff);
    case 7:
        return parse_remove_thread_block(r, content, size, coff);
    case 8:
        return parse_label_block(r, content, size, coff);
    default:
        return 0; /* unknown kinds are skipped (§8.2) */
    }
}

/* One step: 1 = event in r->cur, 0 = progress without event, < 0 error. */
static int step(mantra_reader *r) {
    if (r->state == ST_ROWS) {
        if (r->blk_pos < r->blk_len)
            return next_row(r);
        r->state = ST_OBJECTS;
        return 0;
    }
    return r->v6 ? next_block_v6(r) : next_object_v4(r);
}

static void count_event(mantra_reader *r, const mantra_trace_event *e) {
    r->stats.events++;
    if (e->decode_status != 0)
        r->stats.decode_errors++;
    if (e->metadata->fields_from_manifest)
        r->stats.manifest_events++;
}

int mantra_reader_next(mantra_reader *r, const mantra_trace_event **ev) {
    if (r == NULL || ev == NULL)
        return MANTRA_EINVAL;
    *ev = NULL;
    if (!r->opened)
        return MANTRA_EINVAL;
    for (;;) {
        if (r->order) {
            const mantra_trace_event *e = rd_order_pop(r->order);
            if (e) {
                count_event(r, e);
                *ev = e;
                return 1;
            }
        }
        if (r->state == ST_END)
            return 0;
        if (r->state == ST_ERROR)
            return r->err_code;
        int rc = step(r);
        if (rc < 0) {
            /* events queued from complete blocks are still delivered before the error */
            if (r->order)
                rd_order_flush(r->order);
            continue;
        }
        if (rc == 1) {
            count_event(r, &r->cur);
            *ev = &r->cur;
            return 1;
        }
    }
}

const mantra_trace_info *mantra_reader_info(const mantra_reader *r) { return r ? &r->info : NULL; }
const mantra_reader_stats *mantra_reader_get_stats(const mantra_reader *r) { return r ? &r->stats : NULL; }
int mantra_reader_complete(const mantra_reader *r) { return r ? r->complete : 0; }
const char *mantra_reader_last_error(const mantra_reader *r) { return r ? r->err : ""; }
uint64_t mantra_reader_error_offset(const mantra_reader *r) { return r ? r->err_off : 0; }
