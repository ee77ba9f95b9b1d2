/* What the diagnostics client commands share (diag_target.c): collect.c and counters.c. */
#ifndef MANTRA_TOOL_DIAG_TARGET_H
#define MANTRA_TOOL_DIAG_TARGET_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "mantra/diag_client.h"

/* Set by SIGINT or SIGTERM between tool_signals_catch() and tool_signals_restore(). */
extern volatile sig_atomic_t tool_stop_signal;
void tool_signals_catch(void);
void tool_signals_restore(void);

/* One option that takes a value: its long and short spelling (short may be NULL) and where the
 * value goes. Tables end with a zero entry. */
typedef struct tool_option {
    const char *long_name, *short_name;
    const char **value;
} tool_option;
/* Reads argv[1..argc) against opts: --help/-h prints usage and gives -1; an unknown argument or a
 * missing value is a usage error (its TOOL_USAGE status); else TOOL_OK with every value set. */
int tool_options(const char *cmd, const char *usage, const tool_option *opts, int argc, char **argv);

/* Seconds of the monotonic clock. */
double tool_now_s(void);

/* Seconds from "5", "2.5" or dotnet-trace's "dd:hh:mm:ss"; -1 when malformed. */
double tool_parse_duration(const char *s);

/* The target of exactly one of -p PID, -n NAME, --diagnostic-port ADDRESS[,listen|,connect]: a
 * listening port waits (Ctrl-C gives up: call tool_signals_catch first) for the process to
 * connect. *pid when known (0 for ADDRESS,connect), the address into address. A TOOL_* status,
 * the problem reported as "mantra CMD: ...". */
int tool_diag_target(const char *cmd, const char *pid_arg, const char *name, const char *port, mantra_diag_target **t,
                     uint64_t *pid, char *address, size_t size);

#endif
