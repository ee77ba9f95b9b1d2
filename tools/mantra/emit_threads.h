/* The writer threads of mantra emit (emit.c): started together behind a gate, joined at the end.
 * Two implementations, chosen by tools/CMakeLists.txt: emit_threads_posix.c (POSIX threads) and
 * emit_threads_inline.c (hosts without threads, such as WASI: one writer on the calling thread,
 * which pumps the job queue itself). */
#ifndef MANTRA_TOOL_EMIT_THREADS_H
#define MANTRA_TOOL_EMIT_THREADS_H

#include <stdint.h>

typedef struct emit_thread {
    uint32_t number;
    uint64_t events;
    int mix;
    double end;           /* seconds (emit_now()) after the last write */
    void (*tick)(void);   /* NULL, or called every EMIT_TICK_EVENTS events by the writer loop */
    void *os;             /* the implementation's */
} emit_thread;

#define EMIT_TICK_EVENTS 4096u

/* Monotonic seconds. */
double emit_now(void);
/* The most writer threads this build can run (1 without threads). */
uint32_t emit_max_threads(void);
/* Runs write(&ws[k]) for k < n, all starting at once; while they run, pump() is called every
 * pump_s seconds when pump is not NULL. Returns how many writers ran (< n: a thread could not be
 * started, and none of them wrote: their write saw events = 0). */
uint32_t emit_threads_run(emit_thread *ws, uint32_t n, void (*write)(emit_thread *), void (*pump)(void),
                          double pump_s);

#endif
