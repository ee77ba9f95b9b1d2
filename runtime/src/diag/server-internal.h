/* server-internal.h - the diagnostics server of src/diag: ports (ports.c), the server loop
 * (server.c), command dispatch (commands.c), the streaming output of IPC sessions (stream.c) and
 * process start-up (process.c). Private (prefix dg_). */
#ifndef MANTRA_DIAG_SERVER_INTERNAL_H
#define MANTRA_DIAG_SERVER_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "diag/ipc-internal.h"
#include "mantra/session.h"
#include "platform/platform-internal.h"

/* ---- ports (ports.c) ---- */

typedef struct dg_port_spec {
    char address[256]; /* as written */
    int connect;       /* 1: reverse server (connect), 0: listen */
    int suspend;       /* 1: hold mantra_init until ResumeRuntime arrives on this port */
    int tcp;           /* 1: host:port, else a Unix socket path */
    char host[200];
    char port[8];
} dg_port_spec;

/* Parses MANTRA_DiagnosticPorts text into at most cap ports. 0; MANTRA_EINVAL or MANTRA_ERANGE
 * with "MANTRA_DiagnosticPorts:COLUMN: message" in err. */
int dg_parse_ports(const char *text, dg_port_spec *out, size_t cap, size_t *count, char *err, size_t errlen);

/* ---- the server (server.c) ---- */

#define DG_MAX_PORTS 8
#define DG_MAX_CONNS 32   /* connections reading a command at once; more are closed at accept */
#define DG_MAX_STREAMS 64 /* IPC sessions */
#define DG_ADVERTISE_SIZE 34

typedef struct dg_port {
    dg_port_spec spec;
    int is_default;
    int fd;            /* listen socket, or the advertised idle connection of a connect port; -1 */
    int resumed;       /* a ResumeRuntime came through this port */
    uint64_t retry_ns; /* connect ports: next attempt */
    uint32_t backoff_ms;
} dg_port;

/* A connection reading its one command. */
typedef struct dg_conn {
    int fd;
    int port;           /* index into the ports */
    uint8_t head[DG_HEADER_SIZE];
    uint8_t *msg;       /* the whole message once the header is in (size bytes) */
    size_t got;         /* bytes received */
    dg_header h;
    uint64_t deadline_ns;
} dg_conn;

/* The output of an IPC session: the connection its CollectTracing came on. Shared by the server
 * (which owns fd) and the session's sink callbacks (drain thread or pump): two references. */
typedef struct dg_stream {
    int fd;
    mantra_session_id id;
    mantra_pal_mutex lock;
    int released;      /* OK(session id) is out: writes go to the socket (else they wait in held) */
    dg_buf held;       /* the trace header written before the response */
    atomic_int broken; /* a send failed or timed out: the server stops the session */
    atomic_int closed; /* the session closed its output */
    atomic_int refs;
    uint32_t timeout_ms;
} dg_stream;

/* stream.c */
extern const mantra_sink_callbacks dg_stream_callbacks;
dg_stream *dg_stream_new(int fd, uint32_t timeout_ms);
/* Sends the response, then what the session wrote so far, and lets later writes through. 0 or -1. */
int dg_stream_release(dg_stream *st, const uint8_t *reply, size_t n);
/* Drops a reference (the last frees it; the fd is the server's to close). */
void dg_stream_unref(dg_stream *st);

typedef struct dg_server {
    dg_port ports[DG_MAX_PORTS];
    size_t nports;
    dg_conn conns[DG_MAX_CONNS];
    size_t nconns;
    dg_stream *streams[DG_MAX_STREAMS];
    size_t nstreams;
    uint32_t timeout_ms;  /* read deadline of a command, and longest stall of a send */
    uint8_t cookie[16];   /* runtime instance cookie: ProcessInfo and the reverse-connect advertise */
    char default_path[256];
    atomic_int stop;
    int wake[2]; /* mantra_pal_wake_open: the server thread's poll returns when the stop wakes it;
                  * -1: none (the poll's timeout ends the wait) */
    mantra_pal_mutex resume_lock;
    mantra_pal_cond resume_cond;
} dg_server;

/* One round: accept, read, dispatch, connect ports, watch streams; waits up to wait_ms in poll
 * (s->wake[0] included, when there is one). */
void dg_server_tick(dg_server *s, uint32_t wait_ms);
/* How long the server thread's round waits at most, ms (process.c; 100, tests may change it before
 * the server starts). */
extern uint32_t dg_server_wait_ms;
/* Closes everything: stops IPC sessions, closes connections and ports, removes the default socket. */
void dg_server_close(dg_server *s);
/* Opens the port (listen socket, or nothing yet for a connect port). 0 or a code, message in err. */
int dg_port_open(dg_port *p, char *err, size_t errlen);
/* 1 while a suspending port has not been resumed. */
int dg_server_suspended(dg_server *s);

/* commands.c: answers the complete message of c (then c's fd is closed or handed to a session). */
void dg_dispatch(dg_server *s, dg_conn *c);
/* Sends a fixed reply (best effort, bounded by the server's timeout). */
void dg_send(dg_server *s, int fd, const uint8_t *data, size_t n);

#endif
