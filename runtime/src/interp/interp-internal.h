/* interp-internal.h - the interpreter's bytecode (opcode table), module and loaded-program
 * layouts. Private (prefix ip_). docs/interp.md describes the encoding. */
#ifndef MANTRA_INTERP_INTERNAL_H
#define MANTRA_INTERP_INTERNAL_H

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "mantra/interp.h"
#include "mantra/profiler.h"

/* Operand kinds; every operand is little-endian and unaligned. */
enum ip_operand {
    IP_OPND_NONE = 0, /* opcode byte only */
    IP_OPND_I64,      /* int64 */
    IP_OPND_F64,      /* IEEE double */
    IP_OPND_U16,      /* argument or local index */
    IP_OPND_BR,       /* int32: target - (offset of the next instruction) */
    IP_OPND_SWITCH,   /* uint32 n, then n int32 relative targets (relative to the end) */
    IP_OPND_CALL,     /* uint32 method index in the module */
    IP_OPND_STR,      /* uint32 string index in the module */
    IP_OPND_PROBE,    /* uint32 probe index in the program (inserted at load only) */
    IP_OPND_BR_PROBE  /* int32 relative target, then the target's uint32 probe index (load only) */
};

/* X(ENUM, mnemonic, operand, pops, pushes). pops/pushes -1: depends (call, ret). */
#define IP_OPCODES(X)                                \
    X(NOP, "nop", IP_OPND_NONE, 0, 0)                \
    X(LDC_I8, "ldc.i8", IP_OPND_I64, 0, 1)           \
    X(LDC_R8, "ldc.r8", IP_OPND_F64, 0, 1)           \
    X(LDARG, "ldarg", IP_OPND_U16, 0, 1)             \
    X(STARG, "starg", IP_OPND_U16, 1, 0)             \
    X(LDLOC, "ldloc", IP_OPND_U16, 0, 1)             \
    X(STLOC, "stloc", IP_OPND_U16, 1, 0)             \
    X(DUP, "dup", IP_OPND_NONE, 1, 2)                \
    X(POP, "pop", IP_OPND_NONE, 1, 0)                \
    X(ADD, "add", IP_OPND_NONE, 2, 1)                \
    X(SUB, "sub", IP_OPND_NONE, 2, 1)                \
    X(MUL, "mul", IP_OPND_NONE, 2, 1)                \
    X(DIV, "div", IP_OPND_NONE, 2, 1)                \
    X(REM, "rem", IP_OPND_NONE, 2, 1)                \
    X(NEG, "neg", IP_OPND_NONE, 1, 1)                \
    X(AND, "and", IP_OPND_NONE, 2, 1)                \
    X(OR, "or", IP_OPND_NONE, 2, 1)                  \
    X(XOR, "xor", IP_OPND_NONE, 2, 1)                \
    X(NOT, "not", IP_OPND_NONE, 1, 1)                \
    X(SHL, "shl", IP_OPND_NONE, 2, 1)                \
    X(SHR, "shr", IP_OPND_NONE, 2, 1)                \
    X(SHR_UN, "shr.un", IP_OPND_NONE, 2, 1)          \
    X(ADD_R, "add.r", IP_OPND_NONE, 2, 1)            \
    X(SUB_R, "sub.r", IP_OPND_NONE, 2, 1)            \
    X(MUL_R, "mul.r", IP_OPND_NONE, 2, 1)            \
    X(DIV_R, "div.r", IP_OPND_NONE, 2, 1)            \
    X(NEG_R, "neg.r", IP_OPND_NONE, 1, 1)            \
    X(CEQ, "ceq", IP_OPND_NONE, 2, 1)                \
    X(CNE, "cne", IP_OPND_NONE, 2, 1)                \
    X(CLT, "clt", IP_OPND_NONE, 2, 1)                \
    X(CLE, "cle", IP_OPND_NONE, 2, 1)                \
    X(CGT, "cgt", IP_OPND_NONE, 2, 1)                \
    X(CGE, "cge", IP_OPND_NONE, 2, 1)                \
    X(CLT_UN, "clt.un", IP_OPND_NONE, 2, 1)          \
    X(CGT_UN, "cgt.un", IP_OPND_NONE, 2, 1)          \
    X(CEQ_R, "ceq.r", IP_OPND_NONE, 2, 1)            \
    X(CLT_R, "clt.r", IP_OPND_NONE, 2, 1)            \
    X(CLE_R, "cle.r", IP_OPND_NONE, 2, 1)            \
    X(CGT_R, "cgt.r", IP_OPND_NONE, 2, 1)            \
    X(CGE_R, "cge.r", IP_OPND_NONE, 2, 1)            \
    X(CONV_R8, "conv.r8", IP_OPND_NONE, 1, 1)        \
    X(CONV_I8, "conv.i8", IP_OPND_NONE, 1, 1)        \
    X(BR, "br", IP_OPND_BR, 0, 0)                    \
    X(BRTRUE, "brtrue", IP_OPND_BR, 1, 0)            \
    X(BRFALSE, "brfalse", IP_OPND_BR, 1, 0)          \
    X(BEQ, "beq", IP_OPND_BR, 2, 0)                  \
    X(BNE, "bne", IP_OPND_BR, 2, 0)                  \
    X(BLT, "blt", IP_OPND_BR, 2, 0)                  \
    X(BLE, "ble", IP_OPND_BR, 2, 0)                  \
    X(BGT, "bgt", IP_OPND_BR, 2, 0)                  \
    X(BGE, "bge", IP_OPND_BR, 2, 0)                  \
    X(SWITCH, "switch", IP_OPND_SWITCH, 1, 0)        \
    X(CALL, "call", IP_OPND_CALL, -1, -1)            \
    X(RET, "ret", IP_OPND_NONE, -1, -1)              \
    X(PRINT_I, "print.i", IP_OPND_NONE, 1, 0)        \
    X(PRINT_R, "print.r", IP_OPND_NONE, 1, 0)        \
    X(PRINT_S, "print.s", IP_OPND_STR, 0, 0)         \
    X(NEWLINE, "newline", IP_OPND_NONE, 0, 0)        \
    X(YIELD, "yield", IP_OPND_NONE, 0, 0)            \
    X(AWAIT, "await", IP_OPND_NONE, 1, 1)            \
    X(DELAY, "delay", IP_OPND_NONE, 1, 0)            \
    X(WAIT, "wait", IP_OPND_NONE, 1, 1)              \
    X(PROBE, "probe", IP_OPND_PROBE, 0, 0)           \
    X(PROBE_A, "probe.a", IP_OPND_PROBE, 0, 0)       \
    IP_COUNTING_BRANCHES(X)

/* Counting branches, inserted by the loader in place of a branch whose target has a probe: when
 * taken, they bump the target's counter themselves and land past its probe instruction, so a loop
 * back edge costs no extra dispatch (the probe instruction counts only the arrivals by fall-through).
 * `.p`: plain counter, `.pa`: atomic. Same stack effect as the branch they replace. */
#define IP_COUNTING_BRANCHES(X)                      \
    X(BR_P, "br.p", IP_OPND_BR_PROBE, 0, 0)          \
    X(BRTRUE_P, "brtrue.p", IP_OPND_BR_PROBE, 1, 0)  \
    X(BRFALSE_P, "brfalse.p", IP_OPND_BR_PROBE, 1, 0) \
    X(BEQ_P, "beq.p", IP_OPND_BR_PROBE, 2, 0)        \
    X(BNE_P, "bne.p", IP_OPND_BR_PROBE, 2, 0)        \
    X(BLT_P, "blt.p", IP_OPND_BR_PROBE, 2, 0)        \
    X(BLE_P, "ble.p", IP_OPND_BR_PROBE, 2, 0)        \
    X(BGT_P, "bgt.p", IP_OPND_BR_PROBE, 2, 0)        \
    X(BGE_P, "bge.p", IP_OPND_BR_PROBE, 2, 0)        \
    X(BR_PA, "br.pa", IP_OPND_BR_PROBE, 0, 0)        \
    X(BRTRUE_PA, "brtrue.pa", IP_OPND_BR_PROBE, 1, 0) \
    X(BRFALSE_PA, "brfalse.pa", IP_OPND_BR_PROBE, 1, 0) \
    X(BEQ_PA, "beq.pa", IP_OPND_BR_PROBE, 2, 0)      \
    X(BNE_PA, "bne.pa", IP_OPND_BR_PROBE, 2, 0)      \
    X(BLT_PA, "blt.pa", IP_OPND_BR_PROBE, 2, 0)      \
    X(BLE_PA, "ble.pa", IP_OPND_BR_PROBE, 2, 0)      \
    X(BGT_PA, "bgt.pa", IP_OPND_BR_PROBE, 2, 0)      \
    X(BGE_PA, "bge.pa", IP_OPND_BR_PROBE, 2, 0)

/* The first opcode the assembler refuses (probes and counting branches come from the loader). */
#define IP_OP_FIRST_LOADER_ONLY IP_OP_PROBE

enum ip_opcode {
#define IP_ENUM_(e, s, k, pop, push) IP_OP_##e,
    IP_OPCODES(IP_ENUM_)
#undef IP_ENUM_
    IP_OP_COUNT_
};

typedef struct ip_opinfo {
    const char *name;
    uint8_t operand; /* enum ip_operand */
    int8_t pops, pushes;
} ip_opinfo;

extern const ip_opinfo ip_opinfo_table[IP_OP_COUNT_];

/* Size of the instruction at code[0] (of at most avail bytes); 0 when it does not fit or the
 * opcode is unknown. */
uint32_t ip_insn_size(const uint8_t *code, uint32_t avail);

static inline int32_t ip_load_i32(const uint8_t *p) {
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}
static inline uint32_t ip_load_u32(const uint8_t *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}
static inline uint16_t ip_load_u16(const uint8_t *p) {
    uint16_t v;
    memcpy(&v, p, 2);
    return v;
}
static inline void ip_store_i32(uint8_t *p, int32_t v) { memcpy(p, &v, 4); }
static inline void ip_store_u32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }

/* ---- the module (assembler output) -------------------------------------------------------- */

enum { IP_TYPE_VOID = 0, IP_TYPE_I64 = 1, IP_TYPE_F64 = 2 };
#define IP_MAX_ARGS 255u

typedef struct ip_method {
    char *namespace_name; /* "" when none */
    char *name;
    char *full_name;      /* "Namespace.Name" or "Name" */
    char *signature;
    uint32_t token;
    uint8_t ret_type;     /* async: the type of its task's result */
    uint8_t is_async;     /* 1: `call` gives a task handle; may yield, await, delay */
    uint16_t nargs;
    uint8_t arg_types[IP_MAX_ARGS];
    uint16_t nlocals;
    uint32_t max_stack;   /* deepest evaluation stack (verified) */
    uint8_t *il;
    uint32_t il_size;
} ip_method;

struct mantra_interp_module {
    char *name;
    uint8_t guid[16];
    ip_method *methods;
    size_t nmethods;
    char **strings;       /* print.s literals */
    uint32_t *string_lens;
    size_t nstrings;
    int precompiled;      /* 1: read from an image (src/images): no IL (il NULL), never loaded by
                           * mantra_interp_load */
};

/* ---- the loaded program ----------------------------------------------------------------------- */

typedef struct ip_sched ip_sched; /* async-internal.h */

typedef struct ip_lmethod {
    const ip_method *src;
    const uint8_t *code;      /* in the program's code region */
    uint32_t code_size;
    uint32_t index;
    uint16_t nargs, nlocals;
    uint32_t max_stack;
    uint8_t returns;          /* 1 when ret pops a value */
    uint8_t is_async;         /* its call pushes a task handle (docs/interp.md "Async methods") */
    uint32_t *code_to_il;     /* per code byte offset: IL offset (NULL: identity, no probes) */
    uint32_t nprobes;
    uint32_t *probe_il;       /* IL offsets of the probes, in IL order */
    uint32_t *counters;       /* from the allocator, or the PGO store's shared cells */
    mantra_pgo_method *pgo;   /* the PGO store's method (NULL with an allocator) */
    uint32_t *pgo_slots;      /* per probe: its per-thread slot in the PGO store (NULL with an allocator) */
    /* precompiled code (ip_load_precompiled): the entry part is code/code_size, the split-off
     * cold part below; map: nmap (code offset, IL offset) pairs, 8 bytes each, little-endian,
     * in the image, where code offsets count the entry part's bytes and then the cold part's */
    const uint8_t *cold_code;
    uint32_t cold_size;
    const uint8_t *map;
    uint32_t nmap;
    /* what a call of the method must do beside the call itself, one load at `call`: IP_CALL_FIRST
     * until the first call of precompiled code (the program's first_call hook, once: the
     * per-method load step, where events are written), IP_CALL_ASYNC for an async method (a task) */
    _Atomic uint8_t call_flags;
} ip_lmethod;

enum { IP_CALL_FIRST = 1, IP_CALL_ASYNC = 2 };

/* A code range of a precompiled program, for IP -> method (sorted by start). */
typedef struct ip_range {
    uintptr_t start, end;
    uint32_t method;
    uint8_t cold; /* 1: the method's split-off cold part */
} ip_range;

struct mantra_interp_program {
    const mantra_interp_module *module;
    ip_lmethod *methods;
    size_t nmethods;
    uint8_t *code;            /* every method's code, contiguous; never written after the load */
    size_t code_size;
    uint32_t **probe_counter; /* probe index -> its counter (mutable state, apart from the code) */
    uint32_t nprobes;
    int pgo_mode;
    uint32_t counting;        /* enum mantra_interp_counting, resolved (never DEFAULT) */
    mantra_interp_counter_allocator allocator;
    int pgo_store;            /* 1: counters from the PGO store (no allocator) */
    struct mantra_interp_program *next_live; /* sample.c: the registry of programs (its lock) */
    /* precompiled programs (ip_load_precompiled): code lives in the image, not in code above */
    ip_range *ranges;
    size_t nranges;
    void (*first_call)(void *ctx, const struct mantra_interp_program *p, size_t method);
    void *first_call_ctx;
    const struct mantra_image *image; /* the image it runs from (src/images), NULL from source */
    ip_sched *sched;          /* tasks and continuations of its async methods (async.c) */
    /* profiler hooks (prof.c): per method, the mapper's answer for the hooks of generation
     * state >> 1 (bit 0: hooked), and its client data */
    _Atomic uint32_t *prof_state;
    _Atomic uintptr_t *prof_client;
};

/* ---- profiler hooks (prof.c; the API: src/profiler, mantra/profiler.h) ----------------------- */

typedef struct ip_prof {
    mantra_prof_hooks h;
    uint32_t gen;             /* bumped at every start: the programs' mapper answers are per generation */
} ip_prof;
/* The active hooks, NULL when none. */
extern _Atomic(const ip_prof *) ip_prof_active;

/* The tracer: a second set of hooks beside the profiler's, every method, no mapper (the
 * Mantra-Interp provider's writer, runtime/dotnet/interp_events.c; mantra_prof_trace_start). */
typedef struct ip_trace {
    mantra_prof_trace_fn fn;
    void *ctx;
} ip_trace;
extern _Atomic(const ip_trace *) ip_trace_active;

/* The hooks a run dispatches with, read once when it starts (an entry run, a resumption): a run
 * without hooks goes through the plain handlers and pays nothing at its calls and returns; a run
 * with hooks calls only the ones it started with, while they are still set (a profiler started
 * during a run never sees a Leave without its Enter; a stop takes effect at once). */
typedef struct ip_run_hooks {
    const ip_prof *prof;
    const ip_trace *trace;
} ip_run_hooks;
static inline ip_run_hooks ip_hooks_now(void) {
    ip_run_hooks h = {atomic_load_explicit(&ip_prof_active, memory_order_acquire),
                      atomic_load_explicit(&ip_trace_active, memory_order_acquire)};
    return h;
}

/* What a callback may ask (the public opaque type). */
struct mantra_prof_info {
    const mantra_interp_program *program;
    size_t method;
    int kind;                 /* enum mantra_prof_kind */
    uint32_t flags;           /* the hooks' MANTRA_PROF_ENABLE_* */
    const void *args;         /* CALL: the arguments (ip_value[nargs]) */
    uint32_t nargs;
    int64_t ret;              /* RETURN: the return value's bits */
    uint32_t depth;
    const uint8_t *ip;
};

struct mantra_interp_thread;
/* Calls the run's hooks (rh) of kind for method m (thread t, at frame depth, its task for an async
 * method, else 0): the profiler's when it hooks m, the tracer's; each only while still set. */
void ip_prof_event(const ip_run_hooks *rh, struct mantra_interp_thread *t, const ip_lmethod *m, int kind,
                   const void *args, int64_t ret, uint32_t depth, const uint8_t *ip, uint64_t task);
/* Allocates p's per-method profiler state (load time). 0 or MANTRA_ENOMEM. */
int ip_prof_program_init(mantra_interp_program *p);

/* precompiled.c: a program over code precompiled in an image (src/images), executed in place.
 * The caller has verified the code (every part ends in br or ret, branch targets on instructions
 * of the method's parts, operands in range, stack depths). m must be precompiled and outlive the
 * program; pm[m->nmethods] gives each method's parts and IL map. No probes. 0, MANTRA_ENOMEM. */
typedef struct ip_precompiled_method {
    const uint8_t *code; uint32_t code_size; /* the entry part */
    const uint8_t *cold; uint32_t cold_size; /* the split-off part (NULL, 0: none) */
    const uint8_t *map; uint32_t nmap;
} ip_precompiled_method;
int ip_load_precompiled(const mantra_interp_module *m, const ip_precompiled_method *pm,
                        void (*first_call)(void *ctx, const mantra_interp_program *p, size_t method), void *ctx,
                        mantra_interp_program **out);
/* The IP -> (method, IL offset) lookup of a precompiled program. 0 or MANTRA_EINVAL. */
int ip_locate_precompiled(const mantra_interp_program *p, uintptr_t a, size_t *method, uint32_t *il_offset, int *cold);
/* The first call of a method with IP_CALL_FIRST: clears it and runs the hook once. */
void ip_first_call(const mantra_interp_program *p, const ip_lmethod *m);

/* pgo_store.c: registers lm's method in the PGO store and takes its counters and slots from it.
 * 0, MANTRA_ENOMEM, MANTRA_ESTATE (the method is instrumented with other probes). */
int ip_store_counters(const mantra_interp_module *m, ip_lmethod *lm);

/* sample.c: the registry of live programs the rundown walks (mantra_interp_foreach_program). */
void ip_registry_add_program(mantra_interp_program *p);
void ip_registry_remove_program(mantra_interp_program *p); /* a no-op when p is not in it */

/* load.c: a loaded method's fields from its module method x (index: its index in the module). */
void ip_lmethod_init(ip_lmethod *lm, const ip_method *x, uint32_t index);
/* load.c: marks the basic blocks of m in mark[m->il_size] (1 at each block's first IL offset: the
 * probes of MANTRA_InterpPgo=2); returns their number. */
uint32_t ip_block_starts(const ip_method *m, uint8_t *mark);

/* glob.c */
int ip_glob_one(const char *pat, size_t plen, const char *s);

#endif /* MANTRA_INTERP_INTERNAL_H */
