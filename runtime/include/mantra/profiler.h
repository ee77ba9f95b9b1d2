/* mantra/profiler.h - enter/leave callbacks of the reference interpreter, after CoreCLR's profiler
 * ELT API (ICorProfilerInfo3::SetEnterLeaveFunctionHooks3WithInfo, FunctionIDMapper2,
 * GetFunctionEnter3Info / GetFunctionLeave3Info), paired across the suspension and resumption of
 * async methods as dotnet/runtime PR #131985 pairs them (docs/profiler.md).
 *
 * Callbacks describe physical execution segments, balanced on every thread: Enter when a method
 * starts (kind CALL) and each time it resumes (RESUME); Leave when it completes (RETURN) and each
 * time it suspends (SUSPEND); Unwind for every frame a run-time fault leaves. Each callback says its
 * kind directly, as CPython's sys.monitoring events do (PY_START, PY_RESUME, PY_RETURN, PY_YIELD,
 * PY_UNWIND); the info functions also say it as CoreCLR would: MANTRA_EDATAINCOMPLETE (mirroring
 * CORPROF_E_DATAINCOMPLETE) for the arguments of a resumption and the return value of a suspension.
 * With no hooks set nothing is called and nothing is paid: a run chooses the hooked dispatch when it
 * starts (an entry run, a resumption), so hooks set during a run are seen from its next run on. */
#ifndef MANTRA_PROFILER_H
#define MANTRA_PROFILER_H

#include <stddef.h>
#include <stdint.h>

#include "mantra/interp.h"
#include "mantra/status.h"

MANTRA_BEGIN_DECLS

enum mantra_prof_kind {
    MANTRA_PROF_CALL = 1,    /* Enter: a method starts (its arguments are there) */
    MANTRA_PROF_RESUME = 2,  /* Enter: an async method resumes after a suspension */
    MANTRA_PROF_RETURN = 3,  /* Leave: a method completes (its return value is there) */
    MANTRA_PROF_SUSPEND = 4, /* Leave: an async method suspends (yield, await, delay) */
    MANTRA_PROF_UNWIND = 5   /* Unwind: a run-time fault leaves the frame */
};

/* Flags chosen at start (CoreCLR's COR_PRF_ENABLE_FUNCTION_ARGS, _RETVAL, _FRAME_INFO). */
#define MANTRA_PROF_ENABLE_ARGS 0x1u
#define MANTRA_PROF_ENABLE_RETVAL 0x2u
#define MANTRA_PROF_ENABLE_FRAME_INFO 0x4u

/* What a callback may ask about; valid during the callback only. */
typedef struct mantra_prof_info mantra_prof_info;

/* client_data: what the mapper returned for the method. */
typedef void (*mantra_prof_enter_fn)(uintptr_t client_data, int kind, const mantra_prof_info *info);
typedef void (*mantra_prof_leave_fn)(uintptr_t client_data, int kind, const mantra_prof_info *info);
typedef void (*mantra_prof_unwind_fn)(uintptr_t client_data, const mantra_prof_info *info);
/* Called once per method of a program (possibly more than once, from several threads: it must
 * answer the same each time): set *hook to 0 to leave the method out; the value returned is the
 * callbacks' client_data. NULL mapper: every method, client_data = the method's index. */
typedef uintptr_t (*mantra_prof_mapper_fn)(void *ctx, const mantra_interp_program *program, size_t method, int *hook);

typedef struct mantra_prof_hooks {
    mantra_prof_enter_fn enter;   /* required */
    mantra_prof_leave_fn leave;   /* required */
    mantra_prof_unwind_fn unwind; /* may be NULL */
    mantra_prof_mapper_fn mapper; /* may be NULL */
    void *mapper_ctx;
    uint32_t flags;               /* MANTRA_PROF_ENABLE_* */
} mantra_prof_hooks;

/* Sets the process's hooks (copied). MANTRA_EINVAL (no enter or leave, unknown flags),
 * MANTRA_ESTATE (hooks are set: stop first). Set them before runs begin: a run in progress keeps
 * the dispatch it started with and calls them from the next run (entry run or resumption) on. */
int mantra_prof_start(const mantra_prof_hooks *hooks);
/* Removes the hooks (no callback after it returns on a thread that was not inside one). */
void mantra_prof_stop(void);

/* From inside enter: the arguments (*count in: room in args, out: the method's argument count).
 * MANTRA_OK; MANTRA_EDATAINCOMPLETE on a resumption (no arguments are passed again: none written);
 * MANTRA_EFLAGS without MANTRA_PROF_ENABLE_ARGS; MANTRA_ERANGE when *count is too small (the
 * count needed written); MANTRA_EINVAL outside an Enter. */
int mantra_prof_enter_info(const mantra_prof_info *info, mantra_interp_value *args, size_t *count);
/* From inside leave: the return value (0 for a void method). MANTRA_OK at completion;
 * MANTRA_EDATAINCOMPLETE at a suspension (nothing returned yet); MANTRA_EFLAGS without
 * MANTRA_PROF_ENABLE_RETVAL; MANTRA_EINVAL outside a Leave. */
int mantra_prof_leave_info(const mantra_prof_info *info, mantra_interp_value *retval);

/* The frame of any callback: needs MANTRA_PROF_ENABLE_FRAME_INFO (else MANTRA_EFLAGS). */
typedef struct mantra_prof_frame {
    const mantra_interp_program *program;
    size_t method;       /* index in the program's module */
    uint32_t depth;      /* frame depth on the thread (0: the run's first frame) */
    uint64_t os_thread_id;
    const void *ip;      /* the instruction the method is at (its entry, a resumption point, ...) */
} mantra_prof_frame;
int mantra_prof_frame_info(const mantra_prof_info *info, mantra_prof_frame *out);

/* ---- the tracer ----------------------------------------------------------------------------
 * A second set of hooks beside the profiler's, for a writer of trace events (the Mantra-Interp
 * provider: runtime/dotnet/interp_events.c, docs/profiler.md "In traces"): every method, no mapper,
 * every event of the profiler's five kinds with what a trace needs. The profiler's and the
 * tracer's hooks are independent (either, both or neither). */
typedef struct mantra_prof_trace_event {
    int kind;                 /* enum mantra_prof_kind */
    const mantra_interp_program *program;
    size_t method;            /* index in the program's module */
    uint64_t method_id;       /* its entry address: the MethodID of its load and rundown events */
    uint32_t token;           /* its metadata token */
    uint32_t depth;           /* frame depth on the thread */
    int is_async;             /* 1: an async method (activity below) */
    uint64_t activity;        /* async: its logical call (one per call of it, the same at every
                               * suspension and resumption; unique in the process, never 0) */
    uint64_t parent;          /* async CALL: the logical call of its nearest async caller on the
                               * thread (the awaiting caller), 0 when it has none */
    const uint64_t *stack;    /* async CALL: the thread's interpreted stack, leaf (its entry) first,
                               * as samples give it (at most MANTRA_INTERP_SAMPLE_FRAMES); else NULL */
    size_t stack_depth;
} mantra_prof_trace_event;
typedef void (*mantra_prof_trace_fn)(void *ctx, const mantra_prof_trace_event *e);

/* Sets the tracer. MANTRA_OK (also when this fn and ctx are set already), MANTRA_EINVAL (fn NULL),
 * MANTRA_ESTATE (another tracer is set). The same run rules as mantra_prof_start. */
int mantra_prof_trace_start(mantra_prof_trace_fn fn, void *ctx);
/* Removes the tracer when it is fn with ctx (another is left in place). */
void mantra_prof_trace_stop(mantra_prof_trace_fn fn, void *ctx);

MANTRA_END_DECLS

#endif /* MANTRA_PROFILER_H */
