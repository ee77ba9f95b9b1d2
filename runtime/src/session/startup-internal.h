/* startup-internal.h - what the layer above the sessions calls to initialise the process:
 * mantra_init() lives in src/diag/process.c (the top layer, which also starts the diagnostics
 * server) and runs the startup tracing of this layer first. Private. */
#ifndef MANTRA_SESSION_STARTUP_INTERNAL_H
#define MANTRA_SESSION_STARTUP_INTERNAL_H

#include <stdint.h>

/* Startup tracing from the environment: what mantra/session.h documents for mantra_init(), once per
 * process (startup.c). */
int ss_startup_init(void);
/* Decides the writers' fence once per process (session.c; session-internal.h, "the writers'
 * fence"): membarrier(2) registration, which is cheapest before the process has a second thread. */
void ss_init_writers_fence(void);
/* A copy of tmpl with every "{pid}" replaced by pid and, when n is not 0, every "{n}" by n
 * (malloc'd; path_expand.c), or NULL when out of memory. */
char *ss_path_expand(const char *tmpl, uint64_t pid, uint64_t n);
/* Sets the calling thread's mantra_session_last_error() text (spec.c). */
void ss_set_error(const char *msg);

#endif
