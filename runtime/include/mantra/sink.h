/* mantra/sink.h - one output interface for everything libmantra writes (traces, profiles).
 *
 * A sink is an opaque object with three operations (write, flush, close) and a running count of
 * the bytes it has accepted since it was created. The nettrace writer needs that count: block
 * padding is computed from the absolute stream offset (dotnet/runtime,
 * src/native/eventpipe/ep-block.c, ep_block_fast_serialize).
 *
 * Constructors: a file path (created or truncated), an already-open file descriptor (pipe, socket,
 * file: short writes and EINTR are handled, EAGAIN waits with poll()), a memory buffer (growable,
 * or a fixed caller-provided one), or caller callbacks.
 *
 * Error idiom (the same for every mantra object): functions return 0 (MANTRA_OK) or a negative
 * MANTRA_E* code, and the object keeps a human-readable text of its last error
 * (mantra_sink_last_error()). A write error is sticky: later writes return the same code without
 * writing, so nothing is ever appended after a partial or failed write.
 *
 * Writes are all or nothing as far as the sink can tell: a fixed memory buffer refuses a write that
 * does not fit as a whole; a descriptor reports an error after the bytes the kernel took, and
 * mantra_sink_bytes_written() counts exactly those.
 *
 * Note on pipes: writing to a pipe whose reader is gone raises SIGPIPE, which kills the process
 * unless the program ignores it (signal(SIGPIPE, SIG_IGN)); libmantra does not change signal
 * handling. With SIGPIPE ignored the write fails with EPIPE and is reported as MANTRA_EIO.
 */
#ifndef MANTRA_SINK_H
#define MANTRA_SINK_H

#include <stddef.h>
#include <stdint.h>

#include "mantra/status.h"

MANTRA_BEGIN_DECLS

typedef struct mantra_sink mantra_sink;

/* Caller-provided output. Each callback returns 0 or a negative MANTRA_E* code and may write a
 * message (NUL-terminated, at most errlen bytes) into err. write must take all size bytes or fail.
 * flush and close may be NULL. close is called once, by mantra_sink_close() or mantra_sink_free(). */
typedef struct mantra_sink_callbacks {
    int (*write)(void *ctx, const void *data, size_t size, char *err, size_t errlen);
    int (*flush)(void *ctx, char *err, size_t errlen);
    int (*close)(void *ctx, char *err, size_t errlen);
} mantra_sink_callbacks;

/* Constructors. Each stores a new sink in *out and returns 0; on failure it returns a negative
 * code, and *out is either NULL (MANTRA_ENOMEM, MANTRA_EINVAL for NULL arguments) or a sink in the
 * failed state whose mantra_sink_last_error() says why (e.g. the file could not be created).
 * Free every non-NULL *out with mantra_sink_free(). */

/* Creates or truncates path (mode 0666 & ~umask). */
int mantra_sink_open_file(mantra_sink **out, const char *path);
/* Writes to fd; when own_fd is non-zero the sink closes fd on close/free. */
int mantra_sink_open_fd(mantra_sink **out, int fd, int own_fd);
/* A growable memory buffer starting with initial_capacity bytes (0: 64 KiB). */
int mantra_sink_open_memory(mantra_sink **out, size_t initial_capacity);
/* A fixed caller-owned buffer of capacity bytes; a write that does not fit fails with
 * MANTRA_ENOSPC and writes nothing. */
int mantra_sink_open_buffer(mantra_sink **out, void *buf, size_t capacity);
/* Caller callbacks; ctx is passed to each. */
int mantra_sink_open_callbacks(mantra_sink **out, const mantra_sink_callbacks *cb, void *ctx);

/* Appends size bytes. */
int mantra_sink_write(mantra_sink *sink, const void *data, size_t size);
/* One piece of a gathered write (mantra_sink_write_parts). */
typedef struct mantra_sink_part {
    const void *data;
    size_t size;
} mantra_sink_part;
/* Appends the count parts in order, as one mantra_sink_write() of their concatenation would: a
 * fixed buffer takes all of them or none; a descriptor gets them in writev(2) calls, without a
 * copy; callbacks get one write per non-empty part. Empty parts are allowed (data may then be
 * NULL). */
int mantra_sink_write_parts(mantra_sink *sink, const mantra_sink_part *parts, size_t count);
/* Pushes buffered data to the OS (file/fd sinks hold no buffer; callbacks' flush is called). */
int mantra_sink_flush(mantra_sink *sink);
/* Flushes and releases the output (closes an owned fd / the file). Later writes fail with
 * MANTRA_ESTATE. Returns the close error, if any. Calling it twice returns 0 the second time. */
int mantra_sink_close(mantra_sink *sink);
/* Closes (when not closed yet) and frees. NULL is accepted. */
void mantra_sink_free(mantra_sink *sink);

/* Bytes accepted since creation: the absolute offset of the next byte. */
uint64_t mantra_sink_bytes_written(const mantra_sink *sink);
/* Number of writes that failed since creation. */
uint64_t mantra_sink_error_count(const mantra_sink *sink);
/* The memory of a memory/buffer sink (NULL for other kinds) and its size in *size. Valid until the
 * next write or free. */
const uint8_t *mantra_sink_memory(const mantra_sink *sink, size_t *size);
/* Text of the last error ("" when none). */
const char *mantra_sink_last_error(const mantra_sink *sink);

MANTRA_END_DECLS

#endif /* MANTRA_SINK_H */
