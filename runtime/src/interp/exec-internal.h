/* exec-internal.h - one thread's execution state: the value stack, the frame stack, the output
 * buffer. Frames are data, not C stack frames, so a later async design can save a method's
 * frames and resume them (docs/interp.md "Designed for what follows"). Private. */
#ifndef MANTRA_INTERP_EXEC_INTERNAL_H
#define MANTRA_INTERP_EXEC_INTERNAL_H

#include <stdatomic.h>

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
    uint64_t task;  /* the caller's task (async), 0 */
} ip_frame;

/* The call stack a thread publishes for the sampler (sample.c; docs/interp.md "Sampling"): pub[0..depth]
 * are pseudo instruction pointers, addresses in the program's code: pub[k] for k < depth the call
 * instruction of frame k, pub[depth] the running method's entry or last branch target (stored
 * relaxed by the branches, outside the seqlock: a reader may see a newer leaf). A seqlock: the interpreter
 * thread (the only writer) makes seq odd, stores with release, makes it even again (release); the
 * sampler reads seq (acquire), the entries and depth (acquire), seq again, and retries when it
 * changed. Atomics only, so no data race under TSan; on x86-64 every one of them is a plain mov. */
typedef struct ip_pub {
    _Atomic uint32_t seq;
    _Atomic int32_t depth;       /* -1: not inside a run */
    _Atomic uint64_t os_tid;     /* the OS thread running it */
    _Atomic uintptr_t *ips;      /* max_frames + 1 entries */
} ip_pub;

static inline void ip_pub_begin(ip_pub *p) {
    atomic_store_explicit(&p->seq, atomic_load_explicit(&p->seq, memory_order_relaxed) + 1u, memory_order_relaxed);
}
static inline void ip_pub_end(ip_pub *p) {
    atomic_store_explicit(&p->seq, atomic_load_explicit(&p->seq, memory_order_relaxed) + 1u, memory_order_release);
}
/* A call from depth d (call instruction at call_ip) into callee (entry code). */
static inline void ip_pub_call(ip_pub *p, uint32_t d, const uint8_t *call_ip, const uint8_t *callee) {
    ip_pub_begin(p);
    atomic_store_explicit(&p->ips[d], (uintptr_t)call_ip, memory_order_release);
    atomic_store_explicit(&p->ips[d + 1], (uintptr_t)callee, memory_order_release);
    atomic_store_explicit(&p->depth, (int32_t)(d + 1), memory_order_release);
    ip_pub_end(p);
}
/* A return to depth d (or out of the run: d = -1). */
static inline void ip_pub_depth(ip_pub *p, int32_t d) {
    ip_pub_begin(p);
    atomic_store_explicit(&p->depth, d, memory_order_release);
    ip_pub_end(p);
}

struct mantra_interp_thread {
    const mantra_interp_program *prog;
    ip_pub pub;
    struct mantra_interp_thread *next_live; /* sample.c: the registry of threads (its lock) */
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
    /* Calls this thread made (CALL instructions and entry runs), for the interp-calls counter
     * (mantra_interp_calls_total): written by the thread only, with a relaxed load and store (a
     * plain add in machine code), read by any thread. */
    _Atomic uint64_t calls;
    /* Instructions this thread dispatched (probes included), for the interp-instructions counter
     * (mantra_interp_instructions_total): counted in a register by ip_execute and added here at
     * every branch, call and return, so a reader lags by at most one straight-line run. */
    _Atomic uint64_t insns;
    char err[256];
    size_t out_len;
    char out[4096];
};

/* One more call on t's count (the owner thread only). */
static inline void ip_count_call(mantra_interp_thread *t) {
    atomic_store_explicit(&t->calls, atomic_load_explicit(&t->calls, memory_order_relaxed) + 1u, memory_order_relaxed);
}

/* Adds n dispatched instructions to t's count (the owner thread only). */
static inline void ip_add_insns(mantra_interp_thread *t, uint64_t n) {
    atomic_store_explicit(&t->insns, atomic_load_explicit(&t->insns, memory_order_relaxed) + n, memory_order_relaxed);
}

/* Where a run starts: a method entered (its arguments and zeroed locals at args, sp after them) or
 * resumed (its saved slots at args, ip after the instruction that suspended), as frame base. */
typedef struct ip_start {
    const ip_lmethod *m;
    const uint8_t *ip;
    ip_value *args, *sp;
    uint32_t base;  /* the run's frame index: it returns when that frame leaves */
    uint64_t task;  /* the method's task when it is async, else 0 */
    int resume;     /* 1: a continuation (the profiler's Enter is a RESUME) */
} ip_start;

/* exec.c: runs from s until its base frame returns or suspends: 0 (*result: the value returned, a
 * task handle for an async method) or MANTRA_ESTATE. */
int ip_execute(mantra_interp_thread *t, const ip_start *s, mantra_interp_value *result);
/* exec.c: runs the program's continuations on t (value stack from sp, frames from depth) until task
 * h is done: 0 and its result in *v, or MANTRA_ESTATE (a fault, an invalid task, nothing left to
 * run while it is pending: then *why says so and t->err is left for the caller to locate; a
 * continuation's fault has its own location in t->err, *why NULL). */
int ip_wait_task(mantra_interp_thread *t, uint64_t h, ip_value *sp, uint32_t depth, ip_value *v, const char **why);
void ip_out_flush(mantra_interp_thread *t);

/* sample.c: the registries of live threads and programs the sampler and the rundown walk. */
void ip_registry_add_thread(mantra_interp_thread *t);
void ip_registry_remove_thread(mantra_interp_thread *t);

#endif
