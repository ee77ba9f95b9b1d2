/* sym_samples.h - a trace's samples with their frames resolved and named (sym_samples.c), what
 * `mantra report` and `mantra export` both read. */
#ifndef MANTRA_TOOL_SYM_SAMPLES_H
#define MANTRA_TOOL_SYM_SAMPLES_H

#include <stdint.h>
#include <stdio.h>

#include "pgo_tool.h"
#include "sym_trace.h"

typedef struct sym_sample {
    uint64_t thread;
    int64_t time;
    uint32_t first, count; /* frames[first .. first + count), leaf first */
} sym_sample;

typedef struct sym_samples {
    sym_sample *s;
    size_t n, cap;
    uint32_t *frames; /* indexes into names */
    size_t nframes, cap_frames;
    char **names;     /* "Module!Namespace.Name" ("[cold]" after a cold part's name), interned */
    size_t nnames, cap_names;
    pgo_strmap index;
    int64_t t0, freq; /* the trace's first timestamp and its ticks per second */
} sym_samples;

struct sym_logical;
/* Every sample of the trace st was built from, its frames resolved with st's map and named; an
 * unresolved frame "?" (unresolved_as_address: "0x<address>"). Every other event is handed to
 * other (may be NULL) as it comes. Then the samples are sorted by thread and time; with logical
 * (sym_logical.h, zero-initialised; NULL: physical stacks), samples inside async calls get their
 * logical stacks. 0, -1 (the trace cannot be read: printed), -2. */
int sym_samples_read(sym_samples *ss, const sym_trace *st, int unresolved_as_address, struct sym_logical *logical,
                     void (*other)(void *ctx, const mantra_trace_event *ev), void *ctx);
void sym_samples_free(sym_samples *ss);

/* Sample k's duration in ticks: to its thread's next sample; a thread's last sample, 0 (TraceEvent's
 * SampleProfilerThreadTimeComputer closes it at once: its speedscope conversion ends the thread a
 * microsecond after it). [from, to) is k's thread's run of samples. */
int64_t sym_sample_duration(const sym_samples *ss, size_t k, size_t from, size_t to);
/* The end of the run of samples of sample from's thread. */
size_t sym_samples_thread_end(const sym_samples *ss, size_t from);

#endif
