/* The reader object and its public entry points (mantra/reader.h): creation and freeing, provider
 * and manifest registration, opening a file, descriptor or memory buffer (version discovery, then the
 * V4/V5 or V6 stream takes over), the error record and the getters. Reading events is in
 * event_rows.c. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/le-internal.h"
#include "platform/platform-internal.h"
#include "reader-internal.h"

int rd_fail(mantra_reader *r, int code, uint64_t off, const char *fmt, ...) {
    va_list ap;
    int n = snprintf(r->err, sizeof r->err, "offset %llu: ", (unsigned long long)off);
    va_start(ap, fmt);
    if (n > 0 && (size_t)n < sizeof r->err)
        vsnprintf(r->err + n, sizeof r->err - (size_t)n, fmt, ap);
    va_end(ap);
    r->err_code = code;
    r->err_off = off;
    r->state = RD_ST_ERROR;
    return code;
}

mantra_reader *mantra_reader_new(const mantra_reader_options *options) {
    mantra_reader *r = calloc(1, sizeof *r);
    if (r == NULL)
        return NULL;
    if (options)
        r->opt = *options;
    if (r->opt.max_block_size == 0)
        r->opt.max_block_size = RD_DEFAULT_MAX_BLOCK;
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
    rd_in_close(r);
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
    free(r->provider_manifests);
    cm_map_free(&r->manifest_fields);
    rd_order_free(r->order);
    rd_dense_free(r);
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

int mantra_reader_add_manifest(mantra_reader *r, const struct mantra_manifest *manifest) {
    if (r == NULL || manifest == NULL)
        return MANTRA_EINVAL;
    const struct mantra_manifest **p = realloc(r->manifests, (r->nmanifests + 1) * sizeof *p);
    if (p == NULL)
        return MANTRA_ENOMEM;
    p[r->nmanifests++] = manifest;
    r->manifests = p;
    return 0;
}

int mantra_reader_add_provider_manifest(mantra_reader *r, const struct mantra_manifest *manifest) {
    if (r == NULL || manifest == NULL)
        return MANTRA_EINVAL;
    const struct mantra_manifest **p = realloc(r->provider_manifests, (r->nprovider_manifests + 1) * sizeof *p);
    if (p == NULL)
        return MANTRA_ENOMEM;
    p[r->nprovider_manifests++] = manifest;
    r->provider_manifests = p;
    return 0;
}

/* Version discovery (the order TraceEvent's EventPipeEventSource follows: microsoft/perfview,
 * src/TraceEvent/EventPipe/EventPipeEventSource.cs, header parsing): "Nettrace", then either the
 * FastSerialization header of V4/V5 or a zero and the V6 version header. */
static int open_common(mantra_reader *r) {
    int rc = rd_in_ensure(r, 8);
    if (rc < 0)
        return rc;
    const uint8_t *p = r->buf + r->pos;
    size_t avail = rd_in_avail(r);
    if (rc == 1 && memcmp(p, "Nettrace", 8) == 0) {
        r->pos += 8;
        rc = rd_in_ensure(r, 4);
        if (rc < 0)
            return rc;
        if (rc == 0)
            return rd_fail(r, MANTRA_ETRUNCATED, 8, "input ends after the \"Nettrace\" magic");
        uint32_t v = mantra_load_u32(r->buf + r->pos);
        if (v != 0) {
            rc = rd_open_v4(r);
        } else {
            rc = rd_in_ensure(r, 12);
            if (rc < 0)
                return rc;
            if (rc == 0)
                return rd_fail(r, MANTRA_ETRUNCATED, 12, "input ends inside the V6 version header");
            uint32_t major = mantra_load_u32(r->buf + r->pos + 4);
            if (major < 6)
                return rd_fail(r, MANTRA_EFORMAT, 12, "invalid nettrace version header (major version %u)", major);
            if (major > 6)
                return rd_fail(r, MANTRA_EUNSUPPORTED, 12,
                               "nettrace format version %u is not supported (versions 4 to 6 are)", major);
            r->pos += 12;
            rc = rd_open_v6(r);
        }
    } else if (avail >= 24 && mantra_load_u32(p) == 20 && memcmp(p + 4, RD_FS_SIGNATURE, 20) == 0) {
        r->info.format_version = 3;
        return rd_fail(r, MANTRA_EUNSUPPORTED, 0,
                       "NetPerf format (version 3, no \"Nettrace\" magic) is not supported: mantra reads nettrace "
                       "V4, V5 and V6 traces (.NET Core 3.0 and later)");
    } else {
        return rd_fail(r, rc == 0 && avail < 8 ? MANTRA_ETRUNCATED : MANTRA_EFORMAT, 0,
                       "not a nettrace trace (expected the magic \"Nettrace\")");
    }
    if (rc < 0)
        return rc;
    r->stats.bytes_read = rd_in_offset(r);
    r->state = RD_ST_OBJECTS;
    return 0;
}

int mantra_reader_open_memory(mantra_reader *r, const void *data, size_t size) {
    if (r == NULL || r->opened || (data == NULL && size))
        return MANTRA_EINVAL;
    static const uint8_t empty[1];
    r->opened = 1;
    r->in_kind = RD_IN_MEM;
    r->buf = data ? (uint8_t *)(uintptr_t)data : (uint8_t *)(uintptr_t)empty;
    r->cap = r->end = size;
    r->stats.total_bytes = size;
    return open_common(r);
}

int mantra_reader_open_fd(mantra_reader *r, int fd) {
    if (r == NULL || r->opened || fd < 0)
        return MANTRA_EINVAL;
    r->opened = 1;
    r->in_kind = RD_IN_FD;
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
        r->state = RD_ST_ERROR;
        return MANTRA_EIO;
    }
    int rc = mantra_reader_open_fd(r, fd);
    r->own_fd = 1;
    return rc;
}

int rd_end_of_stream(mantra_reader *r) {
    r->complete = 1;
    r->state = RD_ST_END;
    r->stats.bytes_read = rd_in_offset(r);
    if (r->order && rd_order_flush(r->order) < 0)
        return rd_fail(r, MANTRA_ENOMEM, rd_in_offset(r), "out of memory");
    return 0;
}

int rd_truncated_at_boundary(mantra_reader *r) {
    return rd_fail(r, MANTRA_ETRUNCATED, rd_in_offset(r),
                   "input ends after a complete block but before the end-of-stream marker (incomplete trace)");
}

const mantra_trace_info *mantra_reader_info(const mantra_reader *r) { return r ? &r->info : NULL; }
const mantra_reader_stats *mantra_reader_get_stats(const mantra_reader *r) { return r ? &r->stats : NULL; }
int mantra_reader_complete(const mantra_reader *r) { return r ? r->complete : 0; }
const char *mantra_reader_last_error(const mantra_reader *r) { return r ? r->err : ""; }
uint64_t mantra_reader_error_offset(const mantra_reader *r) { return r ? r->err_off : 0; }
