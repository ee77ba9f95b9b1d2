/* The output of a tracing session started over IPC: its nettrace goes out on the connection that
 * carried the CollectTracing command, right after the OK(session id) response (ipc-protocol.md,
 * CollectTracing "Followed by an Optional Continuation"; dotnet/runtime,
 * src/native/eventpipe/ds-eventpipe-protocol.c: OK first, then ep_start_streaming). The session
 * writes its trace header while it starts, before its id is known, so those bytes wait in `held`
 * until dg_stream_release has sent the response. Sends pass MSG_NOSIGNAL and give up after the
 * server's timeout without progress: a client that went away or stopped reading marks the stream
 * broken and the server stops the session, so no write blocks the drain for long and no SIGPIPE
 * reaches the host. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag/server-internal.h"

dg_stream *dg_stream_new(int fd, uint32_t timeout_ms) {
    dg_stream *st = calloc(1, sizeof *st);
    if (!st)
        return NULL;
    if (mantra_pal_mutex_init(&st->lock) != 0) {
        free(st);
        return NULL;
    }
    st->fd = fd;
    st->timeout_ms = timeout_ms;
    atomic_init(&st->refs, 1);
    return st;
}

void dg_stream_unref(dg_stream *st) {
    if (st && atomic_fetch_sub(&st->refs, 1) == 1) {
        dg_buf_free(&st->held);
        mantra_pal_mutex_destroy(&st->lock);
        free(st);
    }
}

static int send_locked(dg_stream *st, const void *data, size_t n, char *err, size_t errlen) {
    if (atomic_load(&st->broken)) {
        snprintf(err, errlen, "the diagnostics client went away");
        return MANTRA_EIO;
    }
    uint64_t done = 0;
    int rc = mantra_pal_send_all(st->fd, data, n, st->timeout_ms, &done, err, errlen);
    if (rc != 0) {
        atomic_store(&st->broken, 1);
        return MANTRA_EIO;
    }
    return MANTRA_OK;
}

int dg_stream_release(dg_stream *st, const uint8_t *reply, size_t n) {
    char err[128];
    mantra_pal_mutex_lock(&st->lock);
    int rc = send_locked(st, reply, n, err, sizeof err);
    if (!rc && st->held.size)
        rc = send_locked(st, st->held.data, st->held.size, err, sizeof err);
    if (!rc && st->held.failed) { /* the header could not be kept: the stream is useless */
        atomic_store(&st->broken, 1);
        rc = MANTRA_ENOMEM;
    }
    dg_buf_free(&st->held);
    st->released = 1;
    mantra_pal_mutex_unlock(&st->lock);
    return rc ? -1 : 0;
}

static int cb_write(void *ctx, const void *data, size_t size, char *err, size_t errlen) {
    dg_stream *st = ctx;
    mantra_pal_mutex_lock(&st->lock);
    int rc = MANTRA_OK;
    if (st->released)
        rc = send_locked(st, data, size, err, errlen);
    else
        dg_buf_bytes(&st->held, data, size);
    mantra_pal_mutex_unlock(&st->lock);
    return rc;
}

/* The session is done with its output (stop, or a failed start): the client sees the end of the
 * stream; the server closes the descriptor when it notices. */
static int cb_close(void *ctx, char *err, size_t errlen) {
    (void)err;
    (void)errlen;
    dg_stream *st = ctx;
    mantra_pal_mutex_lock(&st->lock);
    if (st->released)
        mantra_pal_socket_shutdown(st->fd);
    mantra_pal_mutex_unlock(&st->lock);
    atomic_store(&st->closed, 1);
    dg_stream_unref(st);
    return MANTRA_OK;
}

const mantra_sink_callbacks dg_stream_callbacks = {cb_write, NULL, cb_close};
