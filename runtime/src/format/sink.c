/* Output sinks (mantra/sink.h): file, file descriptor, memory (growable or fixed), callbacks. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mantra/sink.h"
#include "format/sink-internal.h"
#include "platform/platform-internal.h"

enum sink_kind { SINK_FD, SINK_MEMORY, SINK_BUFFER, SINK_CALLBACKS };

struct mantra_sink {
    enum sink_kind kind;
    int fd;
    int own_fd;
    int closed;
    int failed; /* sticky error code (0 when healthy) */
    uint8_t *mem;
    size_t mem_size, mem_cap;
    mantra_sink_callbacks cb;
    void *cb_ctx;
    uint64_t written;
    uint64_t errors;
    int reserve;       /* a file this sink created: its blocks are allocated ahead (reserve_ahead) */
    uint64_t reserved; /* bytes of the file allocated so far (from offset 0) */
    char err[256];
};

#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 3, 4)))
#endif
static int fail(mantra_sink *s, int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err, sizeof s->err, fmt, ap);
    va_end(ap);
    return code;
}

static mantra_sink *sink_alloc(enum sink_kind kind) {
    mantra_sink *s = calloc(1, sizeof *s);
    if (s) {
        s->kind = kind;
        s->fd = -1;
    }
    return s;
}

int mantra_sink_open_fd(mantra_sink **out, int fd, int own_fd) {
    if (!out)
        return MANTRA_EINVAL;
    *out = NULL;
    if (fd < 0)
        return MANTRA_EINVAL;
    mantra_sink *s = sink_alloc(SINK_FD);
    if (!s)
        return MANTRA_ENOMEM;
    s->fd = fd;
    s->own_fd = own_fd != 0;
    *out = s;
    return MANTRA_OK;
}

int mantra_sink_open_file(mantra_sink **out, const char *path) {
    if (!out)
        return MANTRA_EINVAL;
    *out = NULL;
    if (!path)
        return MANTRA_EINVAL;
    mantra_sink *s = sink_alloc(SINK_FD);
    if (!s)
        return MANTRA_ENOMEM;
    *out = s;
    char why[160];
    int fd = mantra_pal_file_create(path, why, sizeof why);
    if (fd < 0) {
        s->closed = 1;
        s->failed = MANTRA_EIO;
        s->errors++;
        return fail(s, MANTRA_EIO, "cannot create %s: %s", path, why);
    }
    s->fd = fd;
    s->own_fd = 1;
    uint64_t size0;
    s->reserve = mantra_pal_file_size(fd, &size0); /* regular files only (not /dev/null, a FIFO) */
    return MANTRA_OK;
}

int mantra_sink_open_memory(mantra_sink **out, size_t initial_capacity) {
    if (!out)
        return MANTRA_EINVAL;
    *out = NULL;
    mantra_sink *s = sink_alloc(SINK_MEMORY);
    if (!s)
        return MANTRA_ENOMEM;
    s->mem_cap = initial_capacity ? initial_capacity : 65536;
    s->mem = malloc(s->mem_cap);
    if (!s->mem) {
        free(s);
        return MANTRA_ENOMEM;
    }
    *out = s;
    return MANTRA_OK;
}

int mantra_sink_open_buffer(mantra_sink **out, void *buf, size_t capacity) {
    if (!out)
        return MANTRA_EINVAL;
    *out = NULL;
    if (!buf && capacity)
        return MANTRA_EINVAL;
    mantra_sink *s = sink_alloc(SINK_BUFFER);
    if (!s)
        return MANTRA_ENOMEM;
    s->mem = buf;
    s->mem_cap = capacity;
    *out = s;
    return MANTRA_OK;
}

int mantra_sink_open_callbacks(mantra_sink **out, const mantra_sink_callbacks *cb, void *ctx) {
    if (!out)
        return MANTRA_EINVAL;
    *out = NULL;
    if (!cb || !cb->write)
        return MANTRA_EINVAL;
    mantra_sink *s = sink_alloc(SINK_CALLBACKS);
    if (!s)
        return MANTRA_ENOMEM;
    s->cb = *cb;
    s->cb_ctx = ctx;
    *out = s;
    return MANTRA_OK;
}

/* A file this sink created gets its blocks allocated ahead of the writes, in steps of what it
 * holds already (at least RESERVE_MIN, at most RESERVE_MAX), without changing its size: a write
 * into allocated blocks skips the file system's block reservation page by page (ext4 here: 140 MB
 * in 1 MB writes took 33 ms of system CPU, 22-24 after fallocate; the drain of a file session pays
 * it, on the writers' CPUs when they are all busy). The close gives back what was not written
 * (mantra_pal_file_trim). Only regular files; a host or file system that cannot (WASI, some file
 * systems) is not asked again. */
#define RESERVE_MIN (1u << 20)
#define RESERVE_MAX (16u << 20)
static void reserve_ahead(mantra_sink *s, size_t size) {
    uint64_t end = s->written + size;
    if (end <= s->reserved)
        return;
    uint64_t step = s->written < RESERVE_MIN ? RESERVE_MIN : s->written > RESERVE_MAX ? RESERVE_MAX : s->written;
    /* a failure may still have allocated part of the range (ENOSPC on ext4 and XFS keeps what it
     * got): the close trims up to the end asked for either way */
    if (mantra_pal_file_reserve(s->fd, s->reserved, end + step - s->reserved) != 0)
        s->reserve = 0;
    s->reserved = end + step;
}

/* The parts to a descriptor, PARTS_BATCH at a time (the platform's part type is its own):
 * everything, or a failure after the bytes the host took (counted in s->written). */
#define PARTS_BATCH 64u
static int fd_write_parts(mantra_sink *s, const mantra_sink_part *parts, size_t count, size_t total) {
    if (s->reserve)
        reserve_ahead(s, total);
    mantra_pal_part batch[PARTS_BATCH];
    for (size_t i = 0; i < count;) {
        size_t n = 0;
        for (; i < count && n < PARTS_BATCH; i++)
            batch[n++] = (mantra_pal_part){parts[i].data, parts[i].size};
        if (mantra_pal_writev_all(s->fd, batch, n, &s->written, s->err, sizeof s->err) != MANTRA_OK)
            return MANTRA_EIO;
    }
    return MANTRA_OK;
}

/* A growable memory sink with room for size more bytes (not sticky when it cannot grow). */
static int mem_room(mantra_sink *s, size_t size) {
    if (size <= s->mem_cap - s->mem_size)
        return MANTRA_OK;
    size_t cap = s->mem_cap;
    while (size > cap - s->mem_size) {
        if (cap > SIZE_MAX / 2) {
            s->errors++;
            return fail(s, MANTRA_ENOMEM, "memory sink: %zu bytes do not fit", size);
        }
        cap *= 2;
    }
    uint8_t *m = realloc(s->mem, cap);
    if (!m) {
        s->errors++;
        return fail(s, MANTRA_ENOMEM, "memory sink: cannot grow to %zu bytes", cap);
    }
    s->mem = m;
    s->mem_cap = cap;
    return MANTRA_OK;
}

int mantra_sink_gathers(const mantra_sink *s) { return s && s->kind == SINK_FD; }

/* A failed descriptor or callback write: its code stays (later writes return it). */
static int sticky(mantra_sink *s, int rc) {
    if (rc != MANTRA_OK) {
        s->failed = rc;
        s->errors++;
    }
    return rc;
}

/* 0 when s takes writes, else why not (a failed sink's sticky code). */
static int check_writable(mantra_sink *s) {
    if (!s)
        return MANTRA_EINVAL;
    if (s->failed)
        return s->failed;
    if (s->closed)
        return fail(s, MANTRA_ESTATE, "write after close");
    return MANTRA_OK;
}

int mantra_sink_write(mantra_sink *s, const void *data, size_t size) {
    int ok = check_writable(s);
    if (ok != MANTRA_OK)
        return ok;
    if (size == 0)
        return MANTRA_OK;
    if (!data)
        return fail(s, MANTRA_EINVAL, "write of %zu bytes from NULL", size);
    int rc = MANTRA_OK;
    switch (s->kind) {
    case SINK_FD:
        rc = fd_write_parts(s, &(mantra_sink_part){data, size}, 1, size);
        break;
    case SINK_MEMORY:
        if ((rc = mem_room(s, size)) != MANTRA_OK)
            return rc;
        memcpy(s->mem + s->mem_size, data, size);
        s->mem_size += size;
        s->written += size;
        return MANTRA_OK;
    case SINK_BUFFER:
        if (size > s->mem_cap - s->mem_size) {
            s->errors++;
            /* Not sticky: nothing was written, the caller may flush elsewhere and retry. */
            return fail(s, MANTRA_ENOSPC, "buffer sink full: %zu bytes do not fit in the %zu left", size,
                        s->mem_cap - s->mem_size);
        }
        memcpy(s->mem + s->mem_size, data, size);
        s->mem_size += size;
        s->written += size;
        return MANTRA_OK;
    case SINK_CALLBACKS:
        s->err[0] = 0;
        rc = s->cb.write(s->cb_ctx, data, size, s->err, sizeof s->err);
        if (rc == MANTRA_OK)
            s->written += size;
        else if (!s->err[0])
            fail(s, rc, "write callback failed (%s)", mantra_status_name(rc));
        break;
    }
    return sticky(s, rc);
}

int mantra_sink_write_parts(mantra_sink *s, const mantra_sink_part *parts, size_t count) {
    int ok = check_writable(s);
    if (ok != MANTRA_OK)
        return ok;
    if (count && !parts)
        return fail(s, MANTRA_EINVAL, "write of %zu parts from NULL", count);
    size_t total = 0;
    for (size_t i = 0; i < count; i++) {
        if (parts[i].size && !parts[i].data)
            return fail(s, MANTRA_EINVAL, "write of %zu bytes from NULL (part %zu)", parts[i].size, i);
        if (parts[i].size > SIZE_MAX - total)
            return fail(s, MANTRA_EINVAL, "parts of more than SIZE_MAX bytes");
        total += parts[i].size;
    }
    if (total == 0)
        return MANTRA_OK;
    if (s->kind == SINK_FD)
        return sticky(s, fd_write_parts(s, parts, count, total));
    if (s->kind == SINK_MEMORY) { /* all or nothing: room for all of it first */
        int rc = mem_room(s, total);
        if (rc != MANTRA_OK)
            return rc;
    }
    if (s->kind == SINK_BUFFER && total > s->mem_cap - s->mem_size) {
        s->errors++; /* not sticky, as mantra_sink_write */
        return fail(s, MANTRA_ENOSPC, "buffer sink full: %zu bytes do not fit in the %zu left", total,
                    s->mem_cap - s->mem_size);
    }
    for (size_t i = 0; i < count; i++) {
        int rc = parts[i].size ? mantra_sink_write(s, parts[i].data, parts[i].size) : MANTRA_OK;
        if (rc != MANTRA_OK)
            return rc;
    }
    return MANTRA_OK;
}

int mantra_sink_flush(mantra_sink *s) {
    if (!s)
        return MANTRA_EINVAL;
    if (s->failed)
        return s->failed;
    if (s->closed)
        return fail(s, MANTRA_ESTATE, "flush after close");
    if (s->kind == SINK_CALLBACKS && s->cb.flush) {
        s->err[0] = 0;
        int rc = s->cb.flush(s->cb_ctx, s->err, sizeof s->err);
        if (rc != MANTRA_OK) {
            if (!s->err[0])
                fail(s, rc, "flush callback failed (%s)", mantra_status_name(rc));
            s->failed = rc;
            s->errors++;
        }
        return rc;
    }
    return MANTRA_OK;
}

int mantra_sink_close(mantra_sink *s) {
    if (!s)
        return MANTRA_EINVAL;
    if (s->closed)
        return MANTRA_OK;
    s->closed = 1;
    int rc = MANTRA_OK;
    if (s->kind == SINK_FD && s->own_fd && s->fd >= 0) {
        char why[160];
        if (s->reserved > s->written && mantra_pal_file_trim(s->fd, s->written, why, sizeof why) != MANTRA_OK) {
            rc = fail(s, MANTRA_EIO, "giving back the blocks reserved past the end: %s", why);
            s->errors++;
        }
        if (mantra_pal_close(s->fd, why, sizeof why) != MANTRA_OK) {
            rc = fail(s, MANTRA_EIO, "close: %s", why);
            s->errors++;
        }
        s->fd = -1;
    } else if (s->kind == SINK_CALLBACKS && s->cb.close) {
        char e[sizeof s->err] = "";
        rc = s->cb.close(s->cb_ctx, e, sizeof e);
        if (rc != MANTRA_OK) {
            if (e[0])
                memcpy(s->err, e, sizeof e);
            else
                fail(s, rc, "close callback failed (%s)", mantra_status_name(rc));
            s->errors++;
        }
    }
    return rc;
}

void mantra_sink_free(mantra_sink *s) {
    if (!s)
        return;
    mantra_sink_close(s);
    if (s->kind == SINK_MEMORY)
        free(s->mem);
    free(s);
}

uint64_t mantra_sink_bytes_written(const mantra_sink *s) { return s ? s->written : 0; }
uint64_t mantra_sink_error_count(const mantra_sink *s) { return s ? s->errors : 0; }

const uint8_t *mantra_sink_memory(const mantra_sink *s, size_t *size) {
    if (!s || (s->kind != SINK_MEMORY && s->kind != SINK_BUFFER)) {
        if (size)
            *size = 0;
        return NULL;
    }
    if (size)
        *size = s->mem_size;
    return s->mem;
}

const char *mantra_sink_last_error(const mantra_sink *s) { return s ? s->err : "no sink"; }
