/* The reader's input: a memory buffer read in place, or a file descriptor read through the
 * platform layer (mantra_pal_read) into a buffer that is refilled and grown on demand so that a
 * whole block is always contiguous. */
#include <stdlib.h>
#include <string.h>

#include "platform/platform-internal.h"
#include "reader-internal.h"

int rd_in_ensure(mantra_reader *r, size_t n) {
    if (r->end - r->pos >= n)
        return 1;
    if (r->in_kind != RD_IN_FD)
        return 0;
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
    }
    while (r->end < n && !r->eof) {
        char why[160];
        int64_t k = mantra_pal_read(r->fd, r->buf + r->end, r->cap - r->end, why, sizeof why);
        if (k < 0)
            return rd_fail(r, MANTRA_EIO, r->base + r->end, "read error: %s", why);
        if (k == 0)
            r->eof = 1;
        r->end += (size_t)k;
    }
    return r->end - r->pos >= n;
}

void rd_in_close(mantra_reader *r) {
    if (r->in_kind == RD_IN_FD) {
        free(r->buf);
        if (r->own_fd)
            mantra_pal_close(r->fd, NULL, 0);
    }
}
