/* The reader's input: a memory buffer read in place; with MANTRA_READER_MAP, a regular file mapped
 * into memory through the platform layer (mantra_pal_map_file) and then read in place like a memory
 * buffer; or any other descriptor (a pipe, a socket; every descriptor under WASI) read with mantra_pal_read into a buffer
 * that is refilled and grown on demand so that a whole block is always contiguous. */
#include <stdlib.h>
#include <string.h>

#include "platform/platform-internal.h"
#include "reader-internal.h"

/* Bytes of a mapped input read past before they are handed back to the host (mantra_pal_map_done),
 * so that resident memory stays bounded whatever the size of the file. */
#define RD_MAP_RELEASE (16u << 20)
/* Mapped bytes made resident ahead of the position at a time (mantra_pal_map_prefetch). */
#define RD_MAP_AHEAD (8u << 20)

/* A descriptor of a regular file at offset 0 is mapped whole: the reader then sees the same bytes
 * a read() loop would give, without copying them. 1 when mapped. */
static int try_map(mantra_reader *r) {
    r->map_tried = 1;
    uint64_t size;
    if (!mantra_pal_file_size(r->fd, &size) || size == 0 || size != (uint64_t)(size_t)size)
        return 0;
    const void *p = mantra_pal_map_file(r->fd, (size_t)size);
    if (p == NULL)
        return 0;
    r->in_kind = RD_IN_MAP;
    r->buf = (uint8_t *)(uintptr_t)p;
    r->cap = r->end = (size_t)size;
    r->pos = 0;
    r->map_released = 0;
    r->map_ready = 0;
    return 1;
}

/* Makes the next n bytes and RD_MAP_AHEAD more resident ahead of the position, and hands the pages
 * before the position back to the host once RD_MAP_RELEASE bytes have been read past them. Everything the reader keeps (metadata, stacks, queued sorted events) is copied out
 * of its block, and the last event handed out lies in the block before r->pos. */
static void release_mapped(mantra_reader *r, size_t n) {
    size_t page = mantra_pal_page_size();
    if (r->pos + n > r->map_ready || r->map_ready - r->pos < RD_MAP_AHEAD / 2) {
        size_t from = r->map_ready > r->pos ? r->map_ready : r->pos / page * page;
        size_t to = (r->pos + n + RD_MAP_AHEAD + page - 1) / page * page; /* page-aligned, as is from */
        size_t last = (r->end + page - 1) / page * page;
        if (to > last)
            to = last;
        if (to > from)
            mantra_pal_map_prefetch(r->buf + from, to - from);
        r->map_ready = to;
    }
    size_t upto = r->pos / page * page;
    if (upto - r->map_released >= RD_MAP_RELEASE) {
        mantra_pal_map_done(r->buf + r->map_released, upto - r->map_released);
        r->map_released = upto;
    }
}

int rd_in_ensure(mantra_reader *r, size_t n) {
    if (r->end - r->pos >= n) {
        if (r->in_kind == RD_IN_MAP)
            release_mapped(r, n);
        return 1;
    }
    if (r->in_kind != RD_IN_FD)
        return 0;
    if ((r->opt.flags & MANTRA_READER_MAP) && !r->map_tried && r->base == 0 && r->end == 0 && try_map(r))
        return r->end - r->pos >= n;
    if (r->pos > 0) {
        memmove(r->buf, r->buf + r->pos, r->end - r->pos);
        r->base += r->pos;
        r->end -= r->pos;
        r->pos = 0;
    }
    if (n > r->cap) {
        size_t ncap = r->cap ? r->cap : RD_READ_CHUNK;
        while (ncap < n)
            ncap *= 2;
        uint8_t *b = realloc(r->buf, ncap);
        if (b == NULL)
            return rd_fail(r, MANTRA_ENOMEM, rd_in_offset(r), "out of memory (buffer of %zu bytes)", ncap);
        r->buf = b;
        r->cap = ncap;
        rd_plan_forget_notes(r->plans);
    }
    while (r->end < n && !r->eof) {
        char why[160];
        int64_t k = mantra_pal_read_wait(r->fd, r->buf + r->end, r->cap - r->end, why, sizeof why);
        if (k < 0)
            return rd_fail(r, MANTRA_EIO, r->base + r->end, "read error: %s", why);
        if (k == 0)
            r->eof = 1;
        r->end += (size_t)k;
    }
    return r->end - r->pos >= n;
}

void rd_in_close(mantra_reader *r) {
    if (r->in_kind == RD_IN_FD)
        free(r->buf);
    else if (r->in_kind == RD_IN_MAP)
        mantra_pal_unmap_file(r->buf, r->cap);
    if ((r->in_kind == RD_IN_FD || r->in_kind == RD_IN_MAP) && r->own_fd)
        mantra_pal_close(r->fd, NULL, 0);
}
