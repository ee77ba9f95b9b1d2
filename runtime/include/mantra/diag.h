/* mantra/diag.h - the diagnostics server: stock .NET tools (dotnet-trace, the
 * Microsoft.Diagnostics.NETCore.Client library) attach to a process that embeds mantra, as they
 * attach to a .NET runtime (the diagnostics IPC protocol: dotnet/diagnostics,
 * documentation/design-docs/ipc-protocol.md). docs/diagnostics.md has the details.
 *
 * mantra_init() (mantra/session.h) starts it unless MANTRA_EnableDiagnostics=0:
 *   - a Unix socket $TMPDIR/dotnet-diagnostic-<pid>-<start-time key>-socket (mode 0600, peers of
 *     another user refused), removed by mantra_diag_stop() and at exit;
 *   - MANTRA_DiagnosticPorts, in DOTNET_DiagnosticPorts syntax ("ADDRESS[,listen|connect]
 *     [,suspend|nosuspend];..."; ADDRESS a Unix socket path or TCP host:port), adds ports: connect
 *     ports are reverse servers (the process connects to a waiting tool and advertises itself),
 *     listen ports are more listening sockets;
 *   - MANTRA_DefaultDiagnosticPortSuspend=1 (and suspend ports) hold mantra_init() until a
 *     ResumeRuntime command arrives on each of them (threaded build only).
 * Commands: EventPipe CollectTracing 1..5 and StopTracing; Process ProcessInfo 1..3,
 * ResumeRuntime, ProcessEnvironment; every other command is answered with the protocol's
 * UNKNOWN_COMMAND error. A tracing session streams its nettrace over the connection.
 *
 * Threads: one server thread; in the threadless build a job of mantra_pump() (mantra/pump.h) that
 * polls without waiting. Errors: 0 or a negative MANTRA_E* code (mantra/status.h), with the text in
 * mantra_diag_last_error(). */
#ifndef MANTRA_DIAG_H
#define MANTRA_DIAG_H

#include <stddef.h>
#include <stdint.h>

#include "mantra/status.h"

MANTRA_BEGIN_DECLS

/* Starts the server from the environment (what mantra_init() calls; idempotent while it runs).
 * MANTRA_OK also when MANTRA_EnableDiagnostics=0 asks for nothing; MANTRA_EINVAL for a malformed
 * MANTRA_DiagnosticPorts; MANTRA_EUNSUPPORTED where the host has no sockets (WASI) and a port was
 * asked for explicitly; MANTRA_EIO when no port could be opened. */
int mantra_diag_start(void);
/* Stops the server: ends the tracing sessions started over IPC (each trace ends with its end tag),
 * closes every connection and port, removes the default socket file. Safe to call more than once,
 * and registered with atexit by the first successful start. */
void mantra_diag_stop(void);
/* 1 while the server runs, else 0. */
int mantra_diag_running(void);
/* The path of the default listening socket ("" when there is none). */
const char *mantra_diag_socket_path(void);
/* Text of the last server error ("" when none). */
const char *mantra_diag_last_error(void);

MANTRA_END_DECLS

#endif /* MANTRA_DIAG_H */
