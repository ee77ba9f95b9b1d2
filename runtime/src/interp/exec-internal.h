/* exec-internal.h - one thread's execution state: the value stack, the frame stack, the output
 * buffer. Frames are data, not C stack frames, so a later async design can save a method's
 * frames and resume them (docs/interp.md "Designed for what follows"). Private. */
#ifndef MANTRA_INTERP_EXEC_INTERNAL_H
#define MANTRA_INTERP_EXEC_INTERNAL_H

#include "interp/interp-internal.h"

typedef union ip_value {
    int64_t i;
    double d;
} ip_value;

/* The caller's state saved by a call. */
typedef struct ip_frame {
    const ip_lmethod *method;
    const uint8_t *ret_ip;
    ip_value *args; /* the caller's arguments (its locals follow them) */
} ip_frame;

struct mantra_interp_thread {
    const mantra_interp_program *prog;
    mantra_interp_thread_options opts;
    ip_value *stack;
    uint32_t stack_slots;
    ip_frame *frames;
    uint32_t max_frames;
    /* PER_THREAD counting: the table the probes go through, pointing at the thread's own counters
     * (local_counts, merged by mantra_interp_thread_flush: an allocator's counters) or at its cells
     * of the PGO store (pgo: nothing to merge, snapshots read them) */
    uint32_t *local_counts;
    uint32_t **local_table;
    mantra_pgo_thread *pgo;
    char err[256];
    size_t out_len;
    char out[4096];
};

/* exec.c: runs entry (its arguments already at t->stack[0..nargs)). 0 or MANTRA_ESTATE. */
int ip_execute(mantra_interp_thread *t, const ip_lmethod *entry, mantra_interp_value *result);
void ip_out_flush(mantra_interp_thread *t);

#endif
