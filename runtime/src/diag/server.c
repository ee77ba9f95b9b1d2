/* The diagnostics server loop (server-internal.h): one round accepts connections, reads commands
 * without ever waiting on one client, dispatches complete ones, keeps connect ports advertised and
 * watches the connections that stream a trace.
 *
 * As dotnet/runtime, src/native/eventpipe/ds-server.c (server_loop_tick) and ds-ipc.c, with these
 * differences, each so that no client can hold the server: every descriptor is non-blocking; a
 * command must arrive whole within the server's timeout (MANTRA_DiagnosticsTimeoutMs, default
 * 5000 ms) or it is answered with BAD_ENCODING and closed; at most DG_MAX_CONNS connections read at
 * once (more are closed at accept); peers of another user are closed at accept (SO_PEERCRED).
 *
 * Reverse connect (ds-ipc.c, connect ports): the server connects to the tool's socket (100 ms per
 * attempt, retries after 10 ms growing by 1.25 up to 500 ms: DS_IPC_POLL_TIMEOUT_MIN_MS,
 * _MAX_MS, _FALLOFF_FACTOR in ds-ipc-pal-types.h), sends the 34-byte advertise
 * ("ADVR_V1\0", the 16-byte cookie, uint64 pid, uint16 0: ds-protocol.c, ds_ipc_advertise_v1_send)
 * and waits for a command on that connection; once one arrives the connection is handed over and
 * the next round connects again. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/le-internal.h"
#include "diag/server-internal.h"

int dg_port_open(dg_port *p, char *err, size_t errlen) {
    p->fd = -1;
    p->backoff_ms = 10;
    p->retry_ns = 0;
    if (p->spec.connect)
        return MANTRA_OK; /* connected by the loop */
    int fd = p->spec.tcp ? mantra_pal_tcp_listen(p->spec.host, p->spec.port, err, errlen)
                         : mantra_pal_unix_listen(p->spec.address, err, errlen);
    if (fd < 0)
        return fd;
    p->fd = fd;
    return MANTRA_OK;
}

int dg_server_suspended(dg_server *s) {
    for (size_t i = 0; i < s->nports; i++)
        if (s->ports[i].spec.suspend && !s->ports[i].resumed)
            return 1;
    return 0;
}

static void close_fd(int fd) {
    if (fd >= 0)
        (void)mantra_pal_close(fd, NULL, 0);
}

void dg_send(dg_server *s, int fd, const uint8_t *data, size_t n) {
    (void)mantra_pal_send_all(fd, data, n, s->timeout_ms, NULL, NULL, 0);
}

static void drop_conn(dg_server *s, size_t i, uint32_t hresult) {
    dg_conn *c = &s->conns[i];
    if (hresult) {
        uint8_t e[24];
        dg_send(s, c->fd, e, dg_reply_error(e, hresult));
    }
    close_fd(c->fd);
    free(c->msg);
    s->conns[i] = s->conns[--s->nconns];
}

static void add_conn(dg_server *s, int fd, int port) {
    if (s->nconns == DG_MAX_CONNS || !mantra_pal_peer_trusted(fd)) {
        close_fd(fd);
        return;
    }
    dg_conn *c = &s->conns[s->nconns++];
    memset(c, 0, sizeof *c);
    c->fd = fd;
    c->port = port;
    c->deadline_ns = mantra_pal_now_ns() + (uint64_t)s->timeout_ms * 1000000u;
}

/* Reads what the connection has; 1 when its message is complete, 0 when more is to come, or the
 * HRESULT of the error to answer with (then the connection is dropped). EOF before any byte: -1. */
static int64_t read_conn(dg_conn *c) {
    for (;;) {
        uint8_t *dst;
        size_t want;
        if (c->got < DG_HEADER_SIZE) {
            dst = c->head + c->got;
            want = DG_HEADER_SIZE - c->got;
        } else {
            dst = c->msg + c->got;
            want = (size_t)c->h.size - c->got;
        }
        if (want == 0)
            return 1;
        int64_t n = mantra_pal_recv(c->fd, dst, want, NULL, 0);
        if (n == MANTRA_PAL_WOULDBLOCK)
            return 0;
        if (n == 0)
            return c->got == 0 ? -1 : (int64_t)DG_E_BAD_ENCODING; /* truncated */
        if (n < 0)
            return -1;
        c->got += (size_t)n;
        if (c->got == DG_HEADER_SIZE && !c->msg) {
            uint32_t hr = dg_parse_header(c->head, &c->h);
            if (hr)
                return (int64_t)hr;
            if (!(c->msg = malloc(c->h.size)))
                return (int64_t)DG_E_FAIL;
            memcpy(c->msg, c->head, DG_HEADER_SIZE);
        }
    }
}

static void service_conn(dg_server *s, size_t i) {
    dg_conn *c = &s->conns[i];
    int64_t r = read_conn(c);
    if (r == 0)
        return;
    if (r < 0) {
        drop_conn(s, i, 0);
        return;
    }
    if (r != 1) {
        drop_conn(s, i, (uint32_t)r);
        return;
    }
    dg_conn done = *c;
    s->conns[i] = s->conns[--s->nconns];
    dg_dispatch(s, &done); /* closes done.fd or hands it to a session */
    free(done.msg);
}

static void accept_all(dg_server *s, size_t port) {
    for (int k = 0; k < 16; k++) {
        int fd = mantra_pal_accept(s->ports[port].fd, NULL, 0);
        if (fd < 0)
            return;
        add_conn(s, fd, (int)port);
    }
}

static void advertise(dg_server *s, dg_port *p) {
    uint64_t now = mantra_pal_now_ns();
    if (now < p->retry_ns)
        return;
    int fd = p->spec.tcp ? mantra_pal_tcp_connect(p->spec.host, p->spec.port, 100, NULL, 0)
                         : mantra_pal_unix_connect(p->spec.address, 100, NULL, 0);
    uint8_t adv[DG_ADVERTISE_SIZE];
    memcpy(adv, "ADVR_V1", 8); /* with its NUL */
    memcpy(adv + 8, s->cookie, 16);
    cm_store_u64(adv + 24, mantra_pal_pid());
    cm_store_u16(adv + 32, 0);
    if (fd >= 0 && mantra_pal_send_all(fd, adv, sizeof adv, 100, NULL, NULL, 0) == 0) {
        p->fd = fd;
        p->backoff_ms = 10;
        return;
    }
    close_fd(fd);
    p->retry_ns = now + (uint64_t)p->backoff_ms * 1000000u;
    p->backoff_ms = p->backoff_ms * 5 / 4 > 500 ? 500 : p->backoff_ms * 5 / 4;
}

/* A connect port's idle connection became readable: a command is coming (or the tool hung up). */
static void connect_ready(dg_server *s, size_t port, int hup_only) {
    dg_port *p = &s->ports[port];
    int fd = p->fd;
    p->fd = -1;
    if (hup_only) {
        close_fd(fd);
        p->retry_ns = mantra_pal_now_ns() + (uint64_t)p->backoff_ms * 1000000u;
        return;
    }
    add_conn(s, fd, (int)port);
}

/* Ends the server's part of a stream whose session has closed its output. */
static void reap_stream(dg_server *s, size_t i) {
    dg_stream *st = s->streams[i];
    close_fd(st->fd);
    dg_stream_unref(st);
    s->streams[i] = s->streams[--s->nstreams];
}

/* The client of a stream hung up or a send failed: stop the session (its trace ends as far as it
 * can; the client is gone anyway). */
static void stream_gone(dg_stream *st) {
    atomic_store(&st->broken, 1);
    (void)mantra_session_stop(st->id);
}

void dg_server_tick(dg_server *s, uint32_t wait_ms) {
    mantra_pal_pollfd fds[DG_MAX_PORTS + DG_MAX_CONNS + DG_MAX_STREAMS + 1];
    enum { K_PORT, K_CONN, K_STREAM, K_WAKE } kind[DG_MAX_PORTS + DG_MAX_CONNS + DG_MAX_STREAMS + 1];
    size_t idx[DG_MAX_PORTS + DG_MAX_CONNS + DG_MAX_STREAMS + 1], n = 0;
    uint64_t now = mantra_pal_now_ns();
    for (size_t i = 0; i < s->nports; i++) {
        dg_port *p = &s->ports[i];
        if (p->spec.connect && p->fd < 0)
            advertise(s, p);
        if (p->fd >= 0) {
            fds[n] = (mantra_pal_pollfd){p->fd, MANTRA_PAL_POLLIN, 0};
            kind[n] = K_PORT;
            idx[n++] = i;
        }
    }
    for (size_t i = s->nconns; i-- > 0;) /* expired commands first */
        if (now >= s->conns[i].deadline_ns)
            drop_conn(s, i, DG_E_BAD_ENCODING);
    for (size_t i = 0; i < s->nconns; i++) {
        fds[n] = (mantra_pal_pollfd){s->conns[i].fd, MANTRA_PAL_POLLIN, 0};
        kind[n] = K_CONN;
        idx[n++] = i;
    }
    for (size_t i = s->nstreams; i-- > 0;) {
        dg_stream *st = s->streams[i];
        if (atomic_load(&st->closed))
            reap_stream(s, i);
        else if (atomic_load(&st->broken))
            stream_gone(st);
    }
    for (size_t i = 0; i < s->nstreams; i++) {
        fds[n] = (mantra_pal_pollfd){s->streams[i]->fd, MANTRA_PAL_POLLIN, 0};
        kind[n] = K_STREAM;
        idx[n++] = i;
    }
    if (s->wake[0] >= 0) {
        fds[n] = (mantra_pal_pollfd){s->wake[0], MANTRA_PAL_POLLIN, 0};
        kind[n] = K_WAKE;
        idx[n++] = 0;
    }
    if (mantra_pal_poll(fds, n, wait_ms) <= 0) /* with nothing to watch, it just waits */
        return;
    /* Connections first, from the last (handling one may move the last into its place). */
    for (size_t k = n; k-- > 0;)
        if (kind[k] == K_CONN && fds[k].revents)
            service_conn(s, idx[k]);
    for (size_t k = 0; k < n; k++) {
        if (!fds[k].revents)
            continue;
        if (kind[k] == K_STREAM) {
            /* a streaming client sends nothing more: readable means it hung up (or misbehaves) */
            uint8_t b[64];
            int64_t r = mantra_pal_recv(fds[k].fd, b, sizeof b, NULL, 0);
            if (r != MANTRA_PAL_WOULDBLOCK)
                for (size_t i = 0; i < s->nstreams; i++)
                    if (s->streams[i]->fd == fds[k].fd && r <= 0)
                        stream_gone(s->streams[i]);
        } else if (kind[k] == K_WAKE) {
            mantra_pal_wake_clear(fds[k].fd); /* the stop: the thread's loop sees s->stop */
        } else if (kind[k] == K_PORT) {
            dg_port *p = &s->ports[idx[k]];
            if (p->spec.connect && p->fd == fds[k].fd)
                connect_ready(s, idx[k], !(fds[k].revents & MANTRA_PAL_POLLIN));
            else if (!p->spec.connect)
                accept_all(s, idx[k]);
        }
    }
}

void dg_server_close(dg_server *s) {
    /* sessions first, so that their traces end with the end tag while the clients listen */
    for (size_t i = 0; i < s->nstreams; i++) {
        dg_stream *st = s->streams[i];
        if (!atomic_load(&st->closed))
            (void)mantra_session_stop(st->id);
        /* another thread may be stopping it (mantra_shutdown): its stop closes the output; the
         * descriptor must stay open until then */
        while (!atomic_load(&st->closed))
            mantra_pal_yield();
    }
    while (s->nstreams)
        reap_stream(s, s->nstreams - 1);
    while (s->nconns)
        drop_conn(s, s->nconns - 1, 0);
    for (size_t i = 0; i < s->nports; i++) {
        close_fd(s->ports[i].fd);
        s->ports[i].fd = -1;
        if (!s->ports[i].spec.connect && !s->ports[i].spec.tcp)
            (void)mantra_pal_unlink(s->ports[i].spec.address);
    }
    s->nports = 0;
}
