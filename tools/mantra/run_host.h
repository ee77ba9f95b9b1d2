/* The host around mantra run's interpreter (run.c): a signal that asks for a PGO collection and a
 * pump of the job queue while the program runs. Two implementations, chosen by
 * tools/CMakeLists.txt: run_host_posix.c (SIGUSR2 and a pump thread every 20 ms) and
 * run_host_inline.c (hosts without signals or threads, such as WASI: nothing runs beside the
 * program; the queue is pumped when it returns). */
#ifndef MANTRA_TOOL_RUN_HOST_H
#define MANTRA_TOOL_RUN_HOST_H

/* Installs on_request as the SIGUSR2 handler (it must be async-signal-safe) and, when threaded is
 * set, starts pumping the job queue every 20 ms from a thread. 1 when the signal is handled. */
int run_host_start(void (*on_request)(void), int threaded);
/* Stops the pump thread, if any. */
void run_host_stop(void);

#endif
