/* The diagnostics client's connections (mantra/diag_client.h): one command per connection, as the
 * protocol has it (dotnet/diagnostics, documentation/design-docs/ipc-protocol.md: "a connection
 * carries one command"; CollectTracing keeps its connection for the session's stream). Requests
 * and replies as bytes are in ipc_request.c and ipc_parse.c; sockets through the platform layer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag/server-internal.h"
#include "mantra/decode.h"
#include "mantra/diag_client.h"
#include "platform/platform-internal.h"

struct mantra_diag_session {
    int fd;
    uint64_t id;
    int stop_fd;       /* the StopTracing connection while its reply is awaited, else -1 */
    int stop_state;    /* 1 not asked, 2 asked, 0 answered OK, or a negative code */
    uint32_t stop_hr;  /* the HRESULT of an error reply */
};

const char *mantra_diag_hresult_name(uint32_t hresult) {
    switch (hresult) {
    case DG_E_BAD_ENCODING: return "BAD_ENCODING";
    case DG_E_UNKNOWN_COMMAND: return "UNKNOWN_COMMAND";
    case DG_E_UNKNOWN_MAGIC: return "UNKNOWN_MAGIC";
    case DG_E_NOTSUPPORTED: return "NOT_SUPPORTED";
    case DG_E_FAIL: return "E_FAIL";
    case DG_E_INVALIDARG: return "INVALIDARG";
    default: return NULL;
    }
}

void mantra_diag_process_info_free(mantra_diag_process_info *info) {
    if (!info)
        return;
    free(info->command_line);
    free(info->os);
    free(info->arch);
    free(info->entrypoint);
    free(info->runtime_version);
    free(info->rid);
    memset(info, 0, sizeof *info);
}

/* Parses ADDRESS (a Unix socket path or TCP host:port) into *spec. 0 or a code. */
static int parse_address(const char *address, dg_port_spec *spec, char *err, size_t errlen) {
    if (!mantra_pal_sockets_available()) {
        snprintf(err, errlen, "no sockets on this host");
        return MANTRA_EUNSUPPORTED;
    }
    if (!address || !address[0] || strchr(address, ';') || strchr(address, ',')) {
        snprintf(err, errlen, "'%s': not a diagnostics address (a socket path or host:port)", address ? address : "");
        return MANTRA_EINVAL;
    }
    size_t count = 0;
    char why[160];
    if (dg_parse_ports(address, spec, 1, &count, why, sizeof why) != 0 || count != 1) {
        snprintf(err, errlen, "'%s': %s", address, count == 1 ? "not a diagnostics address" : why);
        return MANTRA_EINVAL;
    }
    return 0;
}

/* Connects to ADDRESS. A descriptor or a code. */
static int connect_to(const char *address, uint32_t timeout_ms, char *err, size_t errlen) {
    dg_port_spec spec;
    int rc = parse_address(address, &spec, err, errlen);
    if (rc)
        return rc;
    char host_err[160] = "";
    int fd = spec.tcp ? mantra_pal_tcp_connect(spec.host, spec.port, timeout_ms, host_err, sizeof host_err)
                      : mantra_pal_unix_connect(spec.address, timeout_ms, host_err, sizeof host_err);
    if (fd < 0) {
        snprintf(err, errlen, "cannot connect to %s: %s", address, host_err);
        return fd == MANTRA_ERANGE ? MANTRA_EINVAL : MANTRA_EIO;
    }
    return fd;
}

static void close_fd(int fd) {
    char e[64];
    (void)mantra_pal_close(fd, e, sizeof e);
}

/* Reads exactly n bytes within timeout_ms overall. 0, MANTRA_ETIMEDOUT, or MANTRA_EIO (also when
 * the stream ends first). */
static int read_exact(int fd, uint8_t *buf, size_t n, uint32_t timeout_ms, char *err, size_t errlen) {
    uint64_t deadline = mantra_pal_monotonic_ns() + (uint64_t)timeout_ms * 1000000u;
    size_t got = 0;
    while (got < n) {
        int64_t k = mantra_pal_recv(fd, buf + got, n - got, err, errlen);
        if (k > 0) {
            got += (size_t)k;
            continue;
        }
        if (k == 0) {
            snprintf(err, errlen, "the process closed the connection before its reply ended");
            return MANTRA_EIO;
        }
        if (k != MANTRA_PAL_WOULDBLOCK)
            return MANTRA_EIO;
        uint64_t now = mantra_pal_monotonic_ns();
        if (now >= deadline) {
            snprintf(err, errlen, "no reply within %u ms", timeout_ms);
            return MANTRA_ETIMEDOUT;
        }
        mantra_pal_pollfd p = {fd, MANTRA_PAL_POLLIN, 0};
        uint64_t left_ms = (deadline - now) / 1000000u + 1;
        if (mantra_pal_poll(&p, 1, left_ms > UINT32_MAX ? UINT32_MAX : (uint32_t)left_ms) < 0) {
            snprintf(err, errlen, "poll failed");
            return MANTRA_EIO;
        }
    }
    return 0;
}

/* ---- targets: an address to connect to, or a listening port that processes connect to ---- */

struct mantra_diag_target {
    char address[256];
    int listen_fd;   /* reverse targets: the listening socket; -1 for connect targets */
    int unix_path;   /* 1 when listen_fd is a Unix socket file this target made (removed at the end) */
    int pending_fd;  /* an advertised connection not used yet, else -1 */
    int have_cookie; /* the first advertise was read: only that process's connections are taken */
    uint8_t cookie[16];
    uint64_t pid;
};

int mantra_diag_target_connect(const char *address, mantra_diag_target **out, char *err, size_t errlen) {
    *out = NULL;
    dg_port_spec spec;
    int rc = parse_address(address, &spec, err, errlen);
    if (rc)
        return rc;
    mantra_diag_target *t = calloc(1, sizeof *t);
    if (!t) {
        snprintf(err, errlen, "out of memory");
        return MANTRA_ENOMEM;
    }
    snprintf(t->address, sizeof t->address, "%s", address);
    t->listen_fd = t->pending_fd = -1;
    *out = t;
    return 0;
}

int mantra_diag_target_listen(const char *address, mantra_diag_target **out, char *err, size_t errlen) {
    *out = NULL;
    dg_port_spec spec;
    int rc = parse_address(address, &spec, err, errlen);
    if (rc)
        return rc;
    char host_err[160] = "";
    int fd = spec.tcp ? mantra_pal_tcp_listen(spec.host, spec.port, host_err, sizeof host_err)
                      : mantra_pal_unix_listen(spec.address, host_err, sizeof host_err);
    if (fd < 0) {
        snprintf(err, errlen, "cannot listen on %s: %s", address, host_err);
        return fd == MANTRA_ERANGE ? MANTRA_EINVAL : MANTRA_EIO;
    }
    mantra_diag_target *t = calloc(1, sizeof *t);
    if (!t) {
        close_fd(fd);
        if (!spec.tcp)
            (void)mantra_pal_unlink(spec.address);
        snprintf(err, errlen, "out of memory");
        return MANTRA_ENOMEM;
    }
    snprintf(t->address, sizeof t->address, "%s", address);
    t->listen_fd = fd;
    t->unix_path = !spec.tcp;
    t->pending_fd = -1;
    *out = t;
    return 0;
}

/* Accepts connections on a reverse target until one advertises (the process seen first, once one
 * was): its descriptor, or a code. Connections of other processes, and ones that send no valid
 * advertise within 2 s, are closed. */
static int accept_advertised(mantra_diag_target *t, uint32_t timeout_ms, char *err, size_t errlen) {
    uint64_t deadline = mantra_pal_monotonic_ns() + (uint64_t)timeout_ms * 1000000u;
    for (;;) {
        uint64_t now = mantra_pal_monotonic_ns();
        if (now >= deadline) {
            snprintf(err, errlen, "no process connected to %s within %u ms", t->address, timeout_ms);
            return MANTRA_ETIMEDOUT;
        }
        mantra_pal_pollfd p = {t->listen_fd, MANTRA_PAL_POLLIN, 0};
        uint64_t left = (deadline - now) / 1000000u + 1;
        if (mantra_pal_poll(&p, 1, left > UINT32_MAX ? UINT32_MAX : (uint32_t)left) < 0) {
            snprintf(err, errlen, "poll failed");
            return MANTRA_EIO;
        }
        char host_err[160];
        int fd = mantra_pal_accept(t->listen_fd, host_err, sizeof host_err);
        if (fd == MANTRA_PAL_WOULDBLOCK)
            continue;
        if (fd < 0) {
            snprintf(err, errlen, "accepting on %s: %s", t->address, host_err);
            return MANTRA_EIO;
        }
        uint8_t adv[DG_ADVERTISE_SIZE];
        int rc = read_exact(fd, adv, sizeof adv, 2000, host_err, sizeof host_err);
        /* "ADVR_V1\0", cookie[16], uint64 pid, uint16 0 (dotnet/runtime ds-protocol.c,
         * ds_ipc_advertise_v1_send) */
        if (rc || memcmp(adv, "ADVR_V1", 8) != 0 || (t->have_cookie && memcmp(adv + 8, t->cookie, 16) != 0)) {
            close_fd(fd);
            continue;
        }
        if (!t->have_cookie) {
            memcpy(t->cookie, adv + 8, 16);
            t->pid = mantra_load_u64(adv + 24);
            t->have_cookie = 1;
        }
        return fd;
    }
}

int mantra_diag_target_wait(mantra_diag_target *t, uint32_t timeout_ms, uint64_t *pid, char *err, size_t errlen) {
    if (t->listen_fd < 0) {
        snprintf(err, errlen, "%s is not a listening target", t->address);
        return MANTRA_EINVAL;
    }
    if (t->pending_fd < 0) {
        int fd = accept_advertised(t, timeout_ms, err, errlen);
        if (fd < 0)
            return fd;
        t->pending_fd = fd;
    }
    if (pid)
        *pid = t->pid;
    return 0;
}

const char *mantra_diag_target_address(const mantra_diag_target *t) { return t->address; }

void mantra_diag_target_free(mantra_diag_target *t) {
    if (!t)
        return;
    if (t->pending_fd >= 0)
        close_fd(t->pending_fd);
    if (t->listen_fd >= 0) {
        close_fd(t->listen_fd);
        if (t->unix_path)
            (void)mantra_pal_unlink(t->address);
    }
    free(t);
}

/* A connection for one command: connected, or the next one the process made to a reverse target. */
static int open_conn(mantra_diag_target *t, uint32_t timeout_ms, char *err, size_t errlen) {
    if (t->listen_fd < 0)
        return connect_to(t->address, timeout_ms, err, errlen);
    if (t->pending_fd >= 0) {
        int fd = t->pending_fd;
        t->pending_fd = -1;
        return fd;
    }
    return accept_advertised(t, timeout_ms, err, errlen);
}

/* Sends the request in b on a new connection and reads the reply's header and payload (malloc'd
 * into *payload, its size in *n). Keeps the connection in *fd_out when fd_out is not NULL, else
 * closes it. 0 for OK; MANTRA_ESTATE with *hresult for an error reply; another code. */
static int exchange(mantra_diag_target *t, dg_buf *b, uint32_t timeout_ms, int *fd_out, uint8_t **payload, size_t *n,
                    uint32_t *hresult, char *err, size_t errlen) {
    *payload = NULL;
    *n = 0;
    if (b->failed || b->size < DG_HEADER_SIZE) {
        snprintf(err, errlen, "out of memory or request too large");
        return MANTRA_ENOMEM;
    }
    int fd = open_conn(t, timeout_ms, err, errlen);
    if (fd < 0)
        return fd;
    uint64_t done = 0;
    int rc = mantra_pal_send_all(fd, b->data, b->size, timeout_ms, &done, err, errlen);
    uint8_t head[DG_HEADER_SIZE];
    if (!rc)
        rc = read_exact(fd, head, sizeof head, timeout_ms, err, errlen);
    dg_header h;
    if (!rc && dg_parse_header(head, &h) != 0) {
        snprintf(err, errlen, "%s answered with bytes that are not a diagnostics IPC reply", t->address);
        rc = MANTRA_EFORMAT;
    }
    if (!rc) {
        *n = (size_t)h.size - DG_HEADER_SIZE;
        *payload = malloc(*n ? *n : 1);
        if (!*payload) {
            snprintf(err, errlen, "out of memory");
            rc = MANTRA_ENOMEM;
        }
    }
    if (!rc)
        rc = read_exact(fd, *payload, *n, timeout_ms, err, errlen);
    if (!rc) {
        uint32_t hr = 0;
        int k = dg_parse_reply(&h, *payload, *n, &hr);
        if (k < 0) {
            snprintf(err, errlen, "%s answered with a reply of command set 0x%02x id 0x%02x", t->address, h.set, h.id);
            rc = MANTRA_EFORMAT;
        } else if (k > 0) {
            if (hresult)
                *hresult = hr;
            const char *name = mantra_diag_hresult_name(hr);
            snprintf(err, errlen, "the process refused the command: 0x%08X%s%s", hr, name ? " " : "",
                     name ? name : "");
            rc = MANTRA_ESTATE;
        }
    }
    if (rc || !fd_out) {
        close_fd(fd);
        if (rc) {
            free(*payload);
            *payload = NULL;
            *n = 0;
        }
    } else {
        *fd_out = fd;
    }
    return rc;
}

int mantra_diag_process_info_get(mantra_diag_target *t, uint32_t timeout_ms, mantra_diag_process_info *out,
                                 uint32_t *hresult, char *err, size_t errlen) {
    static const struct {
        uint8_t id;
        int version;
    } TRY[] = {{DG_PR_INFO3, 3}, {DG_PR_INFO2, 2}, {DG_PR_INFO, 1}};
    memset(out, 0, sizeof *out);
    int rc = MANTRA_EINVAL;
    for (size_t i = 0; i < sizeof TRY / sizeof TRY[0]; i++) {
        dg_buf b = {0};
        uint8_t *p;
        size_t n;
        uint32_t hr = 0;
        dg_request_simple(&b, DG_SET_PROCESS, TRY[i].id);
        rc = exchange(t, &b, timeout_ms, NULL, &p, &n, &hr, err, errlen);
        dg_buf_free(&b);
        if (rc == MANTRA_ESTATE && hr == DG_E_UNKNOWN_COMMAND && TRY[i].version > 1)
            continue;
        if (rc) {
            if (hresult)
                *hresult = hr;
            return rc;
        }
        rc = dg_parse_process_info(TRY[i].version, p, n, out);
        free(p);
        if (rc) {
            snprintf(err, errlen, "%s: the ProcessInfo%s reply does not hold its fields", t->address,
                     TRY[i].version == 1 ? "" : TRY[i].version == 2 ? "2" : "3");
            return MANTRA_EFORMAT;
        }
        return 0;
    }
    return rc;
}

int mantra_diag_resume(mantra_diag_target *t, uint32_t timeout_ms, uint32_t *hresult, char *err, size_t errlen) {
    dg_buf b = {0};
    uint8_t *p;
    size_t n;
    uint32_t hr = 0;
    dg_request_simple(&b, DG_SET_PROCESS, DG_PR_RESUME);
    int rc = exchange(t, &b, timeout_ms, NULL, &p, &n, &hr, err, errlen);
    dg_buf_free(&b);
    free(p);
    if (hresult)
        *hresult = hr;
    if (rc == MANTRA_ESTATE && hr == DG_E_UNKNOWN_COMMAND) /* a process that never waits */
        return 0;
    return rc;
}

int mantra_diag_collect_start(mantra_diag_target *t, const mantra_diag_collect_request *req, uint32_t timeout_ms,
                              mantra_diag_session **out, uint32_t *hresult, char *err, size_t errlen) {
    *out = NULL;
    dg_buf b = {0};
    int k = dg_request_collect(&b, req);
    if (k == -2) {
        dg_buf_free(&b);
        snprintf(err, errlen, "a session needs 1 to 1000 providers, each with a name and a level of at most 5");
        return MANTRA_EINVAL;
    }
    uint8_t *p;
    size_t n;
    int fd = -1;
    uint32_t hr = 0;
    int rc = exchange(t, &b, timeout_ms, &fd, &p, &n, &hr, err, errlen);
    dg_buf_free(&b);
    if (hresult)
        *hresult = hr;
    if (rc)
        return rc;
    if (n != 8) {
        free(p);
        close_fd(fd);
        snprintf(err, errlen, "%s: the CollectTracing reply holds %zu bytes, not a session id", t->address, n);
        return MANTRA_EFORMAT;
    }
    mantra_diag_session *s = malloc(sizeof *s);
    if (!s) {
        free(p);
        close_fd(fd);
        snprintf(err, errlen, "out of memory");
        return MANTRA_ENOMEM;
    }
    s->fd = fd;
    s->id = mantra_load_u64(p);
    s->stop_fd = -1;
    s->stop_state = 1;
    s->stop_hr = 0;
    free(p);
    *out = s;
    return 0;
}

uint64_t mantra_diag_session_id(const mantra_diag_session *s) { return s ? s->id : 0; }
int mantra_diag_session_fd(const mantra_diag_session *s) { return s ? s->fd : -1; }

/* Reads the reply of the StopTracing that mantra_diag_session_request_stop sent (readable now). */
static void take_stop_reply(mantra_diag_session *s) {
    char err[160];
    uint8_t head[DG_HEADER_SIZE], body[64];
    dg_header h;
    int rc = read_exact(s->stop_fd, head, sizeof head, 2000, err, sizeof err);
    if (!rc && (dg_parse_header(head, &h) != 0 || h.size - DG_HEADER_SIZE > sizeof body))
        rc = MANTRA_EFORMAT;
    if (!rc)
        rc = read_exact(s->stop_fd, body, (size_t)h.size - DG_HEADER_SIZE, 2000, err, sizeof err);
    if (!rc) {
        int k = dg_parse_reply(&h, body, (size_t)h.size - DG_HEADER_SIZE, &s->stop_hr);
        rc = k < 0 ? MANTRA_EFORMAT : k > 0 ? MANTRA_ESTATE : 0;
    }
    s->stop_state = rc;
    close_fd(s->stop_fd);
    s->stop_fd = -1;
}

int64_t mantra_diag_session_read(mantra_diag_session *s, void *buf, size_t size, uint32_t timeout_ms, char *err,
                                 size_t errlen) {
    for (;;) {
        int64_t k = mantra_pal_recv(s->fd, buf, size, err, errlen);
        if (k == 0 && s->stop_fd >= 0) { /* the end of the stream: the StopTracing answer follows */
            mantra_pal_pollfd q = {s->stop_fd, MANTRA_PAL_POLLIN, 0};
            if (mantra_pal_poll(&q, 1, timeout_ms) > 0)
                take_stop_reply(s);
        }
        if (k != MANTRA_PAL_WOULDBLOCK)
            return k < 0 ? MANTRA_EIO : k;
        mantra_pal_pollfd p[2] = {{s->fd, MANTRA_PAL_POLLIN, 0}, {s->stop_fd, MANTRA_PAL_POLLIN, 0}};
        int r = mantra_pal_poll(p, s->stop_fd >= 0 ? 2 : 1, timeout_ms);
        if (r < 0) {
            snprintf(err, errlen, "poll failed");
            return MANTRA_EIO;
        }
        if (r == 0) {
            snprintf(err, errlen, "nothing within %u ms", timeout_ms);
            return MANTRA_ETIMEDOUT;
        }
        if (s->stop_fd >= 0 && p[1].revents)
            take_stop_reply(s);
    }
}

int mantra_diag_session_request_stop(mantra_diag_session *s, mantra_diag_target *t, uint32_t timeout_ms, char *err,
                                     size_t errlen) {
    if (s->stop_state != 1) {
        snprintf(err, errlen, "StopTracing was sent already");
        return MANTRA_ESTATE;
    }
    dg_buf b = {0};
    dg_request_stop(&b, s->id);
    int fd = b.failed ? MANTRA_ENOMEM : open_conn(t, timeout_ms, err, errlen);
    int rc = fd < 0 ? fd : 0;
    if (!rc) {
        uint64_t done = 0;
        rc = mantra_pal_send_all(fd, b.data, b.size, timeout_ms, &done, err, errlen);
        if (rc)
            close_fd(fd);
    }
    dg_buf_free(&b);
    if (rc)
        return rc;
    s->stop_fd = fd;
    s->stop_state = 2;
    return 0;
}

int mantra_diag_session_stop_state(const mantra_diag_session *s, uint32_t *hresult) {
    if (hresult)
        *hresult = s->stop_hr;
    return s->stop_state;
}

void mantra_diag_session_close(mantra_diag_session *s) {
    if (!s)
        return;
    if (s->stop_fd >= 0)
        close_fd(s->stop_fd);
    close_fd(s->fd);
    free(s);
}

int mantra_diag_stop_tracing(mantra_diag_target *t, uint64_t id, uint32_t timeout_ms, uint32_t *hresult, char *err,
                     size_t errlen) {
    dg_buf b = {0};
    uint8_t *p;
    size_t n;
    uint32_t hr = 0;
    dg_request_stop(&b, id);
    int rc = exchange(t, &b, timeout_ms, NULL, &p, &n, &hr, err, errlen);
    dg_buf_free(&b);
    free(p);
    if (hresult)
        *hresult = hr;
    return rc;
}
