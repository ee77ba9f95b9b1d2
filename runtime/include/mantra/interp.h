/* mantra/interp.h - the reference interpreter: a stack bytecode, its text assembler, block-count
 * probes for PGO (docs/interp.md).
 *
 * Three objects, each with one job:
 *   mantra_interp_module   what the assembler produces: the methods' bytecode ("IL") and metadata.
 *                          Immutable; what a precompiled image would hold.
 *   mantra_interp_program  a module loaded for execution: every method's code in one region of
 *                          the process (probe instructions inserted at load time when PGO is on),
 *                          never written after the load. The counters it bumps live apart, in
 *                          memory an allocator (mantra_interp_counter_allocator) hands out.
 *                          Several threads may run one program at once.
 *   mantra_interp_thread   one thread's execution state: the value stack and the frame stack
 *                          (frames are never C stack frames: a call pushes an interpreter frame).
 *
 * PGO: MANTRA_InterpPgo=0|1|2 and MANTRA_InterpPgoMethods=GLOB,GLOB,... (or the load options).
 * Mode 1 probes method entry (IL offset 0) and every target of a backward branch (including
 * backward switch targets), as the CoreCLR interpreter does; mode 2 every basic block. Each probe
 * bumps one uint32_t counter (wrapping at 2^32).
 */
#ifndef MANTRA_INTERP_H
#define MANTRA_INTERP_H

#include <stddef.h>
#include <stdint.h>

#include "mantra/pgo.h"
#include "mantra/status.h"

MANTRA_BEGIN_DECLS

typedef struct mantra_interp_module mantra_interp_module;
typedef struct mantra_interp_program mantra_interp_program;
typedef struct mantra_interp_thread mantra_interp_thread;

/* ---- assembling --------------------------------------------------------------------------- */

/* Where and why assembling failed. text is "FILE:LINE:COL: error: MESSAGE" (no newline). */
typedef struct mantra_interp_diag {
    uint32_t line; /* 1-based */
    uint32_t col;  /* 1-based, in bytes */
    char message[256];
    char text[512];
} mantra_interp_diag;

/* Assembles size bytes of assembly text (docs/interp.md); file names the text in diagnostics.
 * 0 and *out, or MANTRA_EFORMAT with the first error in *diag (may be NULL), MANTRA_ENOMEM, or
 * MANTRA_EINVAL for NULL arguments. */
int mantra_interp_assemble(const char *text, size_t size, const char *file, mantra_interp_module **out,
                           mantra_interp_diag *diag);
void mantra_interp_module_free(mantra_interp_module *m);

/* ---- methods, identities --------------------------------------------------------------- */

/* What identifies a method to a profile: module name and GUID, metadata token; the rest for
 * display. Pointers live as long as the module. */
typedef struct mantra_interp_method_identity {
    const char *module_name;
    const uint8_t *module_guid; /* 16 bytes, .NET layout (Data1..Data3 little-endian) */
    uint32_t token;             /* 0x06xxxxxx, unique per module */
    const char *namespace_name; /* "" when none */
    const char *name;
    const char *signature;      /* e.g. "int64(int64,double)" */
    uint32_t il_size;           /* bytes of the method's own bytecode */
} mantra_interp_method_identity;

size_t mantra_interp_module_method_count(const mantra_interp_module *m);
/* Method i (0-based, in file order). MANTRA_EINVAL when out of range. */
int mantra_interp_module_method(const mantra_interp_module *m, size_t i, mantra_interp_method_identity *out);
/* The index of the method named "Namespace.Name" or "Name" (a short name must be unique), or -1. */
int64_t mantra_interp_module_find(const mantra_interp_module *m, const char *name);

/* ---- loading, probes ------------------------------------------------------------------------ */

/* Hands out a method's counters when it is loaded with probes: il_offsets are the probes' IL
 * offsets in IL order (count >= 1). Returns count uint32_t counters (their initial values are the
 * allocator's), or NULL (out of memory: the load fails with MANTRA_ENOMEM). release, when set, is
 * called once per allocation when the program is freed.
 *
 * Without an allocator (the default) the counters live in the PGO store (mantra/pgo.h): the
 * program's module is registered with its name and GUID, each method with probes with its token,
 * namespace, name, signature, bytecode size and code hash, and instrumented with one
 * BasicBlockIntCount (0x41) record per probe at its IL offset. Those counters outlive the program
 * and every session, mantra_pgo_snapshot sees them, and a method loaded again (same module GUID
 * and name, same token) counts on in the same counters (another probe layout for it: MANTRA_ESTATE). */
typedef struct mantra_interp_counter_allocator {
    uint32_t *(*alloc)(void *ctx, const mantra_interp_method_identity *id, const uint32_t *il_offsets,
                       uint32_t count);
    void (*release)(void *ctx, const mantra_interp_method_identity *id, uint32_t *counters, uint32_t count);
    void *ctx;
} mantra_interp_counter_allocator;

/* How probes count (docs/interp.md "Counting and threads"). */
enum mantra_interp_counting {
    MANTRA_INTERP_COUNT_DEFAULT = 0,   /* per-thread, except in the threadless build (plain) */
    MANTRA_INTERP_COUNT_PLAIN = 1,     /* relaxed load + store on the shared counter: no data race, but
                                        * threads bumping one counter at once may lose counts */
    MANTRA_INTERP_COUNT_ATOMIC = 2,    /* relaxed atomic add on the shared counter: exact, always
                                        * current, a locked instruction per count */
    MANTRA_INTERP_COUNT_PER_THREAD = 3 /* each interpreter thread counts into its own array, added to
                                        * the shared counters (atomically) when a run returns and by
                                        * mantra_interp_thread_flush: exact, as cheap as plain */
};

typedef struct mantra_interp_load_options {
    int pgo_mode;             /* -1 (default): MANTRA_InterpPgo (unset: 0); else 0, 1 or 2 */
    const char *pgo_methods;  /* NULL (default): MANTRA_InterpPgoMethods (unset or empty: every
                               * method); else a glob list "A*,Ns.B?,..." ("" = every method) */
    const mantra_interp_counter_allocator *allocator; /* NULL: the PGO store (the default);
                                                       * mantra_interp_private_counters(): zeroed
                                                       * arrays owned by the program */
    uint32_t counting;        /* enum mantra_interp_counting */
} mantra_interp_load_options;

void mantra_interp_load_options_init(mantra_interp_load_options *o);
/* The allocator of program-private counters: zeroed arrays, freed with the program, seen by no
 * snapshot (tests that want fresh counters per load, hosts without a PGO store). */
const mantra_interp_counter_allocator *mantra_interp_private_counters(void);
/* Loads m (which must outlive the program). o may be NULL (defaults). 0 and *out, MANTRA_EINVAL
 * (bad option: pgo_mode out of range, or MANTRA_InterpPgo not 0/1/2), MANTRA_ENOMEM. */
int mantra_interp_load(const mantra_interp_module *m, const mantra_interp_load_options *o,
                       mantra_interp_program **out);
void mantra_interp_program_free(mantra_interp_program *p);
const mantra_interp_module *mantra_interp_program_module(const mantra_interp_program *p);
/* The PGO mode the program was loaded with (0, 1, 2). */
int mantra_interp_program_pgo_mode(const mantra_interp_program *p);

/* One method's probes: IL offsets in IL order and their live counters (NULL/0 when the method has
 * no probes). The counters may be written (a profile's initial values, tests). */
typedef struct mantra_interp_probes {
    uint32_t count;
    const uint32_t *il_offsets;
    uint32_t *counters;
} mantra_interp_probes;
int mantra_interp_program_probes(const mantra_interp_program *p, size_t method, mantra_interp_probes *out);

/* The current counts of method's probes into out[count] (count from mantra_interp_program_probes):
 * with the PGO store, each counter's shared cell plus every thread's cell (what a snapshot reads,
 * counts of runs in progress included); else the counters themselves. 0 or MANTRA_EINVAL. */
int mantra_interp_program_counts(const mantra_interp_program *p, size_t method, uint32_t *out);
/* The PGO store's method behind method's probes, or NULL (no probes, or another allocator). */
mantra_pgo_method *mantra_interp_program_pgo_method(const mantra_interp_program *p, size_t method);

/* Maps an instruction address of the loaded code (a sampled IP) to its method and the IL offset of
 * its instruction (an inserted probe maps to the IL offset of the instruction it precedes).
 * 0, or MANTRA_EINVAL when ip is not in the program's code. */
int mantra_interp_program_locate(const mantra_interp_program *p, const void *ip, size_t *method,
                                 uint32_t *il_offset);
/* The address of method's code and its size in bytes (with inserted probes). */
int mantra_interp_program_code(const mantra_interp_program *p, size_t method, const uint8_t **code,
                               size_t *size);

/* ---- running ------------------------------------------------------------------------------- */

/* A value: every stack slot, argument and local holds 64 bits, read as an int64 or a double by the
 * instruction that uses it. */
typedef union mantra_interp_value {
    int64_t i;
    double d;
} mantra_interp_value;

typedef struct mantra_interp_thread_options {
    /* Program output (print.*); NULL: standard output. Called with buffered chunks. */
    void (*write)(void *ctx, const char *data, size_t size);
    void *write_ctx;
    uint32_t stack_slots; /* value stack size in 8-byte slots; 0: 1 Mi */
    uint32_t max_frames;  /* call depth; 0: 100000 */
} mantra_interp_thread_options;

void mantra_interp_thread_options_init(mantra_interp_thread_options *o);
/* Execution state for one OS thread at a time (o may be NULL). 0, MANTRA_EINVAL, MANTRA_ENOMEM. */
int mantra_interp_thread_create(const mantra_interp_program *p, const mantra_interp_thread_options *o,
                                mantra_interp_thread **out);
void mantra_interp_thread_free(mantra_interp_thread *t);
/* Runs method entry (name as mantra_interp_module_find takes it) with nargs arguments to its ret.
 * *result (may be NULL) gets the returned value (0 for void methods). 0; MANTRA_EINVAL (no such
 * method, wrong argument count); MANTRA_ESTATE for a run-time fault (division by zero, stack
 * overflow, conversion overflow), with "METHOD+IL_x: REASON" in mantra_interp_thread_last_error. */
int mantra_interp_thread_run(mantra_interp_thread *t, const char *entry, const mantra_interp_value *args,
                             size_t nargs, mantra_interp_value *result);
const char *mantra_interp_thread_last_error(const mantra_interp_thread *t);
/* The host's event loop (docs/interp.md "Async methods"): runs up to max continuations of t's
 * program that are ready (or become ready, a delay's time passing, within timeout_ms) on t, so a
 * continuation may resume on another interpreter thread than the one it suspended on. The number
 * run, or MANTRA_ESTATE for a fault in one (mantra_interp_thread_last_error), MANTRA_EINVAL. */
int mantra_interp_thread_pump(mantra_interp_thread *t, uint32_t max, uint32_t timeout_ms);
/* PER_THREAD counting with an allocator's counters: adds the thread's counts into the program's
 * counters and zeroes its own (done by mantra_interp_thread_run before it returns, and by
 * mantra_interp_thread_free). Call from the thread that runs t, between runs. A no-op for the
 * other countings and for the PGO store, whose PER_THREAD probes count straight into the thread's
 * mantra_pgo_thread cells (seen by snapshots at once, nothing to merge). */
void mantra_interp_thread_flush(mantra_interp_thread *t);
/* The counting the program was loaded with (never DEFAULT). */
uint32_t mantra_interp_program_counting(const mantra_interp_program *p);
/* 1 when the method's signature returns double, 0 int64, -1 void or unknown method. */
int mantra_interp_module_returns_double(const mantra_interp_module *m, size_t method);
/* Argument count of a method, or -1. */
int mantra_interp_module_arg_count(const mantra_interp_module *m, size_t method);
/* 1 when argument i of the method is a double, 0 an int64, -1 out of range. */
int mantra_interp_module_arg_is_double(const mantra_interp_module *m, size_t method, size_t i);

/* ---- sampling ------------------------------------------------------------------------------ */

/* Every interpreter thread publishes its call stack as it calls and returns (docs/interp.md
 * "Sampling"), as pseudo instruction pointers: addresses inside the program's code
 * (mantra_interp_program_code), so that a method's code range [code, code + size) is what a
 * MethodLoad/MethodDCEnd event describes and a profiler resolves them to method names. The leaf
 * frame is where the running method last branched to (or fell through a branch to), else its entry
 * or the call instruction it last returned to (the dispatch loop publishes at branches, calls and
 * returns, not per instruction); each caller's frame is the address of its call instruction. In a
 * precompiled image these are addresses of the mapped image, in the hot or the cold section. */
#define MANTRA_INTERP_SAMPLE_FRAMES 100u /* leaf-most frames a sample keeps (EventPipe's 100) */

typedef struct mantra_interp_sample {
    const mantra_interp_program *program;
    uint64_t os_thread_id; /* the OS thread inside the run (mantra_interp_thread_run's caller) */
    const uint64_t *ips;   /* frames pseudo IPs, leaf first; valid during the callback only */
    size_t frames;
} mantra_interp_sample;
typedef void (*mantra_interp_sample_fn)(void *ctx, const mantra_interp_sample *s);

/* Calls fn, on the calling thread, with the current stack of every interpreter thread that is
 * inside a run (a consistent copy: no lock is taken by the running threads). Threads are not
 * created or freed while it runs; fn must not create or free one. Returns the number of samples,
 * or MANTRA_EINVAL. */
int mantra_interp_sample_threads(mantra_interp_sample_fn fn, void *ctx);
/* Calls fn for every loaded program (not yet freed), for a method rundown; the same rules. */
int mantra_interp_foreach_program(void (*fn)(void *ctx, const mantra_interp_program *p), void *ctx);
/* Calls made by all interpreter threads of the process so far (CALL instructions plus entry runs;
 * the threads alive now and those freed), for the interp-calls counter (mantra/counters.h). Each
 * thread counts its own with a relaxed add per call; this sums them under the registry lock. */
uint64_t mantra_interp_calls_total(void);
/* Instructions dispatched by all interpreter threads of the process so far (probes the loader
 * inserted included; alive and freed threads), for the interp-instructions counter. Each thread
 * counts in a register and adds to its own total at every branch, call, return and fault, so a
 * running thread's part lags by at most one straight-line run. */
uint64_t mantra_interp_instructions_total(void);

/* A sampler thread that calls tick(ctx) every interval_ms (0: 1 ms, the .NET runtime's default
 * sampling interval, dotnet/runtime src/native/eventpipe/ep-sample-profiler.c) until
 * mantra_interp_sampler_stop; the tick decides whether to sample (mantra_dotnet_stacks_init's tick
 * samples while a session enables ThreadSample). The tick returns nonzero while it is active (the
 * next tick follows after interval_ms) and 0 when it is idle: the sampler then sleeps until
 * mantra_interp_sampler_wake() (a session that may enable sampling has started), with a backstop
 * tick every MANTRA_INTERP_SAMPLER_IDLE_MS. One per process: MANTRA_ESTATE when one runs.
 * MANTRA_EUNSUPPORTED in the threadless build (nothing could run beside the interpreter). */
typedef int (*mantra_interp_tick_fn)(void *ctx);
#define MANTRA_INTERP_SAMPLER_IDLE_MS 1000u
int mantra_interp_sampler_start(uint32_t interval_ms, mantra_interp_tick_fn tick, void *ctx);
/* Ends an idle sleep of the sampler: its next tick follows at once (no-op when none runs). */
void mantra_interp_sampler_wake(void);
/* Stops the sampler thread and waits for it (no-op when none runs). */
void mantra_interp_sampler_stop(void);

/* 1 when this build's dispatch loop uses computed goto (labels as values), 0 a switch. */
int mantra_interp_computed_goto(void);
/* Matches name against a glob list ("*", "?", comma-separated): 1 or 0 (docs/interp.md). */
int mantra_interp_glob_match(const char *list, const char *name);

MANTRA_END_DECLS

#endif /* MANTRA_INTERP_H */
