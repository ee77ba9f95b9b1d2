/* mantra/diag_client.h - the diagnostics client: what dotnet-trace and dotnet-counters do over the
 * diagnostics IPC protocol (dotnet/diagnostics, documentation/design-docs/ipc-protocol.md), in C, for
 * any process that serves it: a .NET runtime or a process that embeds mantra (mantra/diag.h).
 * docs/diagnostics.md, "The client", has the details.
 *
 * An ADDRESS is a Unix socket path, or TCP "host:port" (the syntax of MANTRA_DiagnosticPorts:
 * TCP when it ends in ":DIGITS" and holds no '/'). A process's default endpoint is the newest
 * $TMPDIR/dotnet-diagnostic-PID-KEY-socket (mantra_diag_endpoint_of).
 *
 * Errors: 0 or a negative MANTRA_E* code (mantra/status.h) with the text in err (at most errlen
 * bytes): MANTRA_ENOENT no such process or no endpoint, MANTRA_EIO the connection failed (the host's
 * reason, e.g. permission), MANTRA_ESTATE the runtime answered with an error (*hresult holds it;
 * mantra_diag_hresult_name names it), MANTRA_EINVAL a malformed address or request,
 * MANTRA_EUNSUPPORTED no sockets here (WASI). Nothing is left behind on a failure. */
#ifndef MANTRA_DIAG_CLIENT_H
#define MANTRA_DIAG_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "mantra/session.h"
#include "mantra/status.h"

MANTRA_BEGIN_DECLS

/* One published endpoint: a socket file of a live process. */
typedef struct mantra_diag_endpoint {
    uint64_t pid;
    char path[256];
} mantra_diag_endpoint;

/* The endpoints in $TMPDIR (or /tmp), by pid ascending, one per pid (its newest socket file), in
 * *out (malloc'd, free() it; NULL when there are none) and their number in *count; files of
 * processes that no longer run are skipped and counted in *stale (may be NULL). 0 or a code. */
int mantra_diag_list(mantra_diag_endpoint **out, size_t *count, size_t *stale, char *err, size_t errlen);
/* The default endpoint of pid into path: MANTRA_ENOENT ("no such process" or "no diagnostics
 * endpoint") when there is none. */
int mantra_diag_endpoint_of(uint64_t pid, char *path, size_t size, char *err, size_t errlen);

/* Where commands go: an ADDRESS to connect to for each command, or a port this process listens
 * on for processes that connect to it (reverse connect: a process started with
 * DOTNET_DiagnosticPorts=ADDRESS or MANTRA_DiagnosticPorts=ADDRESS, which advertises itself on each
 * connection and takes one command per connection). */
typedef struct mantra_diag_target mantra_diag_target;

/* A target that connects to address (checked here; nothing is opened yet). */
int mantra_diag_target_connect(const char *address, mantra_diag_target **out, char *err, size_t errlen);
/* A target that listens on address (a Unix socket file it makes, refused when the file exists and
 * removed by mantra_diag_target_free, or TCP host:port). Its commands go to the first process that
 * connects and to no other (by the advertised cookie). */
int mantra_diag_target_listen(const char *address, mantra_diag_target **out, char *err, size_t errlen);
/* Reverse targets: waits up to timeout_ms for the first process to connect and advertise, and
 * keeps that connection for the next command; its pid into *pid. MANTRA_ETIMEDOUT when none came. */
int mantra_diag_target_wait(mantra_diag_target *t, uint32_t timeout_ms, uint64_t *pid, char *err, size_t errlen);
const char *mantra_diag_target_address(const mantra_diag_target *t);
void mantra_diag_target_free(mantra_diag_target *t);

/* What ProcessInfo says. Strings are malloc'd UTF-8 ("" when the reply has none). */
typedef struct mantra_diag_process_info {
    int version;     /* 1, 2 or 3: the command the process answered */
    uint64_t pid;
    uint8_t cookie[16];
    char *command_line, *os, *arch;
    char *entrypoint, *runtime_version; /* ProcessInfo2 and 3 */
    char *rid;                          /* ProcessInfo3 */
} mantra_diag_process_info;

/* ProcessInfo3, then ProcessInfo2, then ProcessInfo when the process answers UNKNOWN_COMMAND (as
 * dotnet-counters does). */
int mantra_diag_process_info_get(mantra_diag_target *t, uint32_t timeout_ms, mantra_diag_process_info *out,
                                 uint32_t *hresult, char *err, size_t errlen);
void mantra_diag_process_info_free(mantra_diag_process_info *info);

/* ResumeRuntime: 0 also when the process answers UNKNOWN_COMMAND (it does not wait). */
int mantra_diag_resume(mantra_diag_target *t, uint32_t timeout_ms, uint32_t *hresult, char *err, size_t errlen);

/* A tracing session requested over IPC. */
typedef struct mantra_diag_collect_request {
    const mantra_provider_spec *providers; /* 1..1000 */
    size_t count;
    uint32_t buffer_mb;        /* 0: 256, as dotnet-trace */
    uint64_t rundown_keywords; /* MANTRA_DIAG_RUNDOWN_DEFAULT, 0 for none, or others (CollectTracing4) */
    int stackwalk;             /* 1 (the default of the tools) or 0 (CollectTracing3) */
} mantra_diag_collect_request;

/* The rundown keywords a session gets by default (dotnet/runtime ep.c, ep_default_rundown_keyword). */
#define MANTRA_DIAG_RUNDOWN_DEFAULT UINT64_C(0x80020139)

typedef struct mantra_diag_session mantra_diag_session;

/* CollectTracing2 (the default rundown or none, stacks on), 3 (stacks off) or 4 (other rundown
 * keywords), as dotnet-trace chooses; on UNKNOWN_COMMAND to 3 or 4, nothing is retried (the caller
 * decides). On success *out streams the session's nettrace. */
int mantra_diag_collect_start(mantra_diag_target *t, const mantra_diag_collect_request *req, uint32_t timeout_ms,
                              mantra_diag_session **out, uint32_t *hresult, char *err, size_t errlen);
/* The session id the process gave. */
uint64_t mantra_diag_session_id(const mantra_diag_session *s);
/* Reads the next bytes of the stream, waiting up to timeout_ms: the count (> 0), 0 at the end of
 * the stream (the process closed it: stopped or exited), MANTRA_ETIMEDOUT when nothing came in time,
 * or MANTRA_EIO. */
int64_t mantra_diag_session_read(mantra_diag_session *s, void *buf, size_t size, uint32_t timeout_ms, char *err,
                                 size_t errlen);
/* The stream's descriptor, to read the session with a reader (mantra_reader_open_fd: its reads
 * wait for data) instead of mantra_diag_session_read. */
int mantra_diag_session_fd(const mantra_diag_session *s);
/* Sends StopTracing for this session on a connection of its own and returns without waiting:
 * the process writes the rundown and the end of the stream, then answers; mantra_diag_session_read
 * takes the answer while it reads the stream (a .NET runtime answers only once the stream it
 * writes has been read). 0 or a code; MANTRA_ESTATE when it was sent already. */
int mantra_diag_session_request_stop(mantra_diag_session *s, mantra_diag_target *t, uint32_t timeout_ms, char *err,
                                     size_t errlen);
/* Where that StopTracing stands: 1 not sent, 2 sent and not answered yet, 0 answered OK,
 * MANTRA_ESTATE answered with an error (its HRESULT in *hresult), another code when the answer
 * could not be read. */
int mantra_diag_session_stop_state(const mantra_diag_session *s, uint32_t *hresult);
/* Closes the stream (does not stop the session). */
void mantra_diag_session_close(mantra_diag_session *s);

/* StopTracing(id) on a connection of its own, waiting for the answer: the process writes the
 * rundown and the end of the stream first, which a .NET runtime does only while someone reads the
 * stream, so a caller that holds the stream uses mantra_diag_session_request_stop instead. */
int mantra_diag_stop_tracing(mantra_diag_target *t, uint64_t id, uint32_t timeout_ms, uint32_t *hresult, char *err,
                     size_t errlen);

/* The HRESULT a process answers a command it does not know with (UNKNOWN_COMMAND). */
#define MANTRA_DIAG_UNKNOWN_COMMAND 0x80131385u

/* The protocol's name of an HRESULT a process answers with ("UNKNOWN_COMMAND", "BAD_ENCODING",
 * "UNKNOWN_MAGIC", "NOT_SUPPORTED", "E_FAIL", "INVALIDARG", ...), or NULL. */
const char *mantra_diag_hresult_name(uint32_t hresult);

MANTRA_END_DECLS

#endif /* MANTRA_DIAG_CLIENT_H */
