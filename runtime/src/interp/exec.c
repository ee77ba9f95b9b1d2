/* exec.c - the dispatch loop. Computed goto (GCC/Clang labels as values: one indirect jump per
 * instruction, at the end of each handler) where the compiler has it, a switch otherwise
 * (-DMANTRA_INTERP_SWITCH forces the switch). Calls push an interpreter frame on the thread's
 * frame stack and never recurse in C; arguments, locals and the evaluation stack of every frame
 * live on the thread's value stack: [args | locals | stack], the callee's arguments being the
 * values the caller pushed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "interp/async-internal.h"

#if (defined(__GNUC__) || defined(__clang__)) && !defined(MANTRA_INTERP_SWITCH)
#define IP_COMPUTED_GOTO 1
#else
#define IP_COMPUTED_GOTO 0
#endif

int mantra_interp_computed_goto(void) {
    return IP_COMPUTED_GOTO;
}

static void out_flush(mantra_interp_thread *t) {
    if (t->out_len == 0)
        return;
    if (t->opts.write != NULL)
        t->opts.write(t->opts.write_ctx, t->out, t->out_len);
    else
        fwrite(t->out, 1, t->out_len, stdout);
    t->out_len = 0;
}

static void out_bytes(mantra_interp_thread *t, const char *s, size_t n) {
    while (n > 0) {
        size_t room = sizeof t->out - t->out_len;
        if (room == 0) {
            out_flush(t);
            continue;
        }
        size_t k = n < room ? n : room;
        memcpy(t->out + t->out_len, s, k);
        t->out_len += k;
        s += k;
        n -= k;
    }
}

void ip_out_flush(mantra_interp_thread *t) {
    out_flush(t);
}

static void out_int(mantra_interp_thread *t, int64_t v) {
    char buf[24];
    int n = snprintf(buf, sizeof buf, "%lld", (long long)v);
    out_bytes(t, buf, (size_t)n);
}

/* Doubles print with %.17g, trimmed to the shortest form that reads back the same value. */
static void out_double(mantra_interp_thread *t, double v) {
    char buf[40];
    int n = 0;
    for (int prec = 1; prec <= 17; prec++) {
        n = snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (strtod(buf, NULL) == v || isnan(v))
            break;
    }
    out_bytes(t, buf, (size_t)n);
}

static int fault(mantra_interp_thread *t, const ip_lmethod *m, const uint8_t *ip, const char *why) {
    size_t mi = 0;
    uint32_t il = 0;
    mantra_interp_program_locate(t->prog, ip, &mi, &il);
    snprintf(t->err, sizeof t->err, "%s+IL_%04x: %s", m->src->full_name, (unsigned)il, why);
    return MANTRA_ESTATE;
}

/* The profiler's unwind hook for every frame of a run that a fault ends, innermost first. */
static int unwind_run(const ip_run_hooks *rh, mantra_interp_thread *t, const ip_lmethod *m, uint32_t depth,
                      uint32_t base, const uint8_t *ip, uint64_t task) {
    ip_prof_event(rh, t, m, MANTRA_PROF_UNWIND, NULL, 0, depth, ip, task);
    const ip_frame *frames = t->frames;
    while (depth > base) {
        depth--;
        ip_prof_event(rh, t, frames[depth].method, MANTRA_PROF_UNWIND, NULL, 0, depth, frames[depth].ret_ip - 5,
                      frames[depth].task);
    }
    return 0;
}

#define READ_I32(p) ip_load_i32(p)
#define READ_U32(p) ip_load_u32(p)
#define READ_U16(p) ip_load_u16(p)

/* Plain counting is a relaxed load and a relaxed store (the machine code of c = c + 1, without a
 * data race when another thread reads or counts); atomic counting a relaxed fetch-add. Both wrap
 * at 2^32 (uint32_t). */
#if defined(__GNUC__) || defined(__clang__)
#define IP_COUNT_PLAIN(k)                                                                  \
    do {                                                                                   \
        uint32_t *c_ = probe_counter[k];                                                   \
        __atomic_store_n(c_, __atomic_load_n(c_, __ATOMIC_RELAXED) + 1u, __ATOMIC_RELAXED); \
    } while (0)
#define IP_COUNT_ATOMIC(k) __atomic_fetch_add(probe_counter[k], 1u, __ATOMIC_RELAXED)
#else
#define IP_COUNT_PLAIN(k) do { uint32_t *c_ = probe_counter[k]; *c_ = *c_ + 1u; } while (0)
#define IP_COUNT_ATOMIC(k) IP_COUNT_PLAIN(k)
#endif

/* Wrapping int64 arithmetic through uint64 (no signed overflow). */
#define WRAP(op, a, b) ((int64_t)((uint64_t)(a)op(uint64_t)(b)))

#if IP_COMPUTED_GOTO
#if defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wpedantic"
#endif
#if defined(__GNUC__) && !defined(__clang__)
/* Keep one dispatch per handler: cross-jumping would merge the handlers' identical tails into
 * one shared indirect jump (worse branch prediction), GCSE hoists the table loads (GCC manual,
 * -fno-gcse, "computed goto"). */
#pragma GCC optimize("no-crossjumping", "no-gcse")
#endif
#define CASE(e) L_##e:
#define NEXT()                                                                                       \
    do {                                                                                             \
        ninsns++;                                                                                    \
        goto *tbl[*ip];                                                                              \
    } while (0)
#define DISPATCH() NEXT();
#else
#define CASE(e) case IP_OP_##e:
#define NEXT()                                                                                       \
    do {                                                                                             \
        ninsns++;                                                                                    \
        goto dispatch;                                                                               \
    } while (0)
#define DISPATCH() ninsns++; dispatch: switch ((enum ip_opcode)*ip)
#endif
/* Instruction counting (interp-instructions): one register add per dispatch (NEXT), handed to the
 * thread's count at every branch, call and return (FLUSH_INSNS), where loops and calls pass. */
#define FLUSH_INSNS()                                                                                \
    do {                                                                                             \
        ip_add_insns(t, ninsns);                                                                     \
        ninsns = 0;                                                                                  \
    } while (0)
/* A fault ends the run: the instructions dispatched up to it count too, and the profiler's unwind
 * hook sees every frame the run leaves. */
#define FAULT(...) (ip_add_insns(t, ninsns), ninsns = 0, fault(__VA_ARGS__), UNWIND_RUN())
#define UNWIND_RUN() (hooked ? unwind_run(&run_hooks, t, m, depth, base, ip, task) : 0, MANTRA_ESTATE)
/* A fault once the running frame has left (its suspension was reported): only its callers unwind. */
#define FAULT_LEFT(why)                                                                              \
    (ip_add_insns(t, ninsns), ninsns = 0, fault(t, m, ip, why),                                      \
     hooked && depth > base ? unwind_run(&run_hooks, t, frames[depth - 1].method, depth - 1, base,   \
                                         frames[depth - 1].ret_ip - 5, frames[depth - 1].task)       \
                            : 0,                                                                     \
     MANTRA_ESTATE)
/* The suspension's Leave, before the continuation is published: once it is, another thread may
 * resume it (and the profiler would see its Enter first). */
#define SUSPEND_HOOK()                                                                               \
    do {                                                                                             \
        if (hooked)                                                                                  \
            ip_prof_event(&run_hooks, t, m, MANTRA_PROF_SUSPEND, NULL, 0, depth, ip, task);          \
    } while (0)
/* At every branch and call the running method's position is published as the sampler's leaf
 * frame (one relaxed store: a plain mov), so that a sample taken in a loop shows where the loop is
 * (the hot or the cold part of precompiled code, an IL offset), not only the method's entry. */
#define PUB_LEAF() atomic_store_explicit(&pub->ips[depth], (uintptr_t)ip, memory_order_relaxed)
#define NEXT_FLUSH()                                                                                 \
    do {                                                                                             \
        FLUSH_INSNS();                                                                               \
        PUB_LEAF();                                                                                  \
        NEXT();                                                                                      \
    } while (0)

int ip_execute(mantra_interp_thread *t, const ip_start *start, mantra_interp_value *result) {
    const mantra_interp_program *prog = t->prog;
    const ip_lmethod *methods = prog->methods;
    ip_sched *sched = prog->sched;
    /* PER_THREAD: the probes go through the thread's own table */
    uint32_t *const *probe_counter = t->local_table ? t->local_table : prog->probe_counter;
    ip_value *stack_end = t->stack + t->stack_slots;
    const ip_lmethod *m = start->m;
    ip_value *args = start->args; /* the locals follow the arguments, then the evaluation stack */
    ip_value *sp = start->sp;
    const uint8_t *ip = start->ip;
    ip_frame *frames = t->frames;
    const uint32_t base = start->base;
    uint32_t depth = base;
    uint64_t task = start->task; /* the running method's task (async), 0 */
    ip_pub *pub = &t->pub; /* the stack the sampler reads (exec-internal.h) */
    uint64_t ninsns = 0; /* dispatched since the last FLUSH_INSNS */
    ip_value leave_v;    /* leave_frame: what the leaving frame gives its caller */
    int leave_push;
    /* Hooks (the profiler's, the tracer's) are chosen once per run: with computed goto a run with
     * hooks dispatches through a second table whose call and return handlers call them, so a run
     * without hooks executes exactly the instructions it would if hooks did not exist. */
#ifdef MANTRA_INTERP_NO_HOOKS
    const ip_run_hooks run_hooks = {NULL, NULL};
    const int hooked = 0; /* compiled out: the baseline of bench/prof_cost.sh */
#else
    const ip_run_hooks run_hooks = ip_hooks_now();
    const int hooked = run_hooks.prof != NULL || run_hooks.trace != NULL;
#endif
    if (hooked)
        ip_prof_event(&run_hooks, t, m, start->resume ? MANTRA_PROF_RESUME : MANTRA_PROF_CALL, args, 0, depth, ip,
                      task);

#if IP_COMPUTED_GOTO
#define IP_LABEL_(e, s, k, pop, push) [IP_OP_##e] = &&L_##e,
    static void *const labels[256] = {IP_OPCODES(IP_LABEL_)};
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Winitializer-overrides"
#elif defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverride-init"
#endif
    /* the same handlers but call and ret, whose hooked variants follow them */
    static void *const labels_hooked[256] = {IP_OPCODES(IP_LABEL_)[IP_OP_CALL] = &&L_CALL_H, [IP_OP_RET] = &&L_RET_H};
#if defined(__clang__)
#pragma clang diagnostic pop
#elif defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
#undef IP_LABEL_
    void *const *const tbl = hooked ? labels_hooked : labels;
#define HOOKED_HANDLER 0 /* the plain table's handlers: never */
#else
#define HOOKED_HANDLER hooked /* one switch: the handlers look */
#endif

    DISPATCH() {
        CASE(NOP) { ip += 1; NEXT(); }
        CASE(LDC_I8) { memcpy(&sp->i, ip + 1, 8); sp++; ip += 9; NEXT(); }
        CASE(LDC_R8) { memcpy(&sp->d, ip + 1, 8); sp++; ip += 9; NEXT(); }
        CASE(LDARG) { *sp++ = args[READ_U16(ip + 1)]; ip += 3; NEXT(); }
        CASE(STARG) { args[READ_U16(ip + 1)] = *--sp; ip += 3; NEXT(); }
        /* local operands are frame slots (arguments + index): one frame pointer serves both */
        CASE(LDLOC) { *sp++ = args[READ_U16(ip + 1)]; ip += 3; NEXT(); }
        CASE(STLOC) { args[READ_U16(ip + 1)] = *--sp; ip += 3; NEXT(); }
        CASE(DUP) { sp[0] = sp[-1]; sp++; ip += 1; NEXT(); }
        CASE(POP) { sp--; ip += 1; NEXT(); }
        CASE(ADD) { sp[-2].i = WRAP(+, sp[-2].i, sp[-1].i); sp--; ip += 1; NEXT(); }
        CASE(SUB) { sp[-2].i = WRAP(-, sp[-2].i, sp[-1].i); sp--; ip += 1; NEXT(); }
        CASE(MUL) { sp[-2].i = WRAP(*, sp[-2].i, sp[-1].i); sp--; ip += 1; NEXT(); }
        CASE(DIV) {
            int64_t b = sp[-1].i, a = sp[-2].i;
            if (b == 0)
                return FAULT(t, m, ip, "integer division by zero");
            if (b == -1 && a == INT64_MIN)
                return FAULT(t, m, ip, "arithmetic overflow");
            sp[-2].i = a / b; sp--; ip += 1; NEXT();
        }
        CASE(REM) {
            int64_t b = sp[-1].i, a = sp[-2].i;
            if (b == 0)
                return FAULT(t, m, ip, "integer division by zero");
            if (b == -1 && a == INT64_MIN)
                return FAULT(t, m, ip, "arithmetic overflow");
            sp[-2].i = a % b; sp--; ip += 1; NEXT();
        }
        CASE(NEG) { sp[-1].i = WRAP(-, 0, sp[-1].i); ip += 1; NEXT(); }
        CASE(AND) { sp[-2].i &= sp[-1].i; sp--; ip += 1; NEXT(); }
        CASE(OR) { sp[-2].i |= sp[-1].i; sp--; ip += 1; NEXT(); }
        CASE(XOR) { sp[-2].i ^= sp[-1].i; sp--; ip += 1; NEXT(); }
        CASE(NOT) { sp[-1].i = ~sp[-1].i; ip += 1; NEXT(); }
        CASE(SHL) { sp[-2].i = (int64_t)((uint64_t)sp[-2].i << (sp[-1].i & 63)); sp--; ip += 1; NEXT(); }
        CASE(SHR) {
            /* arithmetic shift without implementation-defined behaviour */
            int64_t a = sp[-2].i;
            unsigned s = (unsigned)(sp[-1].i & 63);
            uint64_t u = (uint64_t)a >> s;
            if (a < 0 && s > 0)
                u |= ~(UINT64_MAX >> s);
            sp[-2].i = (int64_t)u; sp--; ip += 1; NEXT();
        }
        CASE(SHR_UN) { sp[-2].i = (int64_t)((uint64_t)sp[-2].i >> (sp[-1].i & 63)); sp--; ip += 1; NEXT(); }
        CASE(ADD_R) { sp[-2].d += sp[-1].d; sp--; ip += 1; NEXT(); }
        CASE(SUB_R) { sp[-2].d -= sp[-1].d; sp--; ip += 1; NEXT(); }
        CASE(MUL_R) { sp[-2].d *= sp[-1].d; sp--; ip += 1; NEXT(); }
        CASE(DIV_R) { sp[-2].d /= sp[-1].d; sp--; ip += 1; NEXT(); }
        CASE(NEG_R) { sp[-1].d = -sp[-1].d; ip += 1; NEXT(); }
        CASE(CEQ) { sp[-2].i = sp[-2].i == sp[-1].i; sp--; ip += 1; NEXT(); }
        CASE(CNE) { sp[-2].i = sp[-2].i != sp[-1].i; sp--; ip += 1; NEXT(); }
        CASE(CLT) { sp[-2].i = sp[-2].i < sp[-1].i; sp--; ip += 1; NEXT(); }
        CASE(CLE) { sp[-2].i = sp[-2].i <= sp[-1].i; sp--; ip += 1; NEXT(); }
        CASE(CGT) { sp[-2].i = sp[-2].i > sp[-1].i; sp--; ip += 1; NEXT(); }
        CASE(CGE) { sp[-2].i = sp[-2].i >= sp[-1].i; sp--; ip += 1; NEXT(); }
        CASE(CLT_UN) { sp[-2].i = (uint64_t)sp[-2].i < (uint64_t)sp[-1].i; sp--; ip += 1; NEXT(); }
        CASE(CGT_UN) { sp[-2].i = (uint64_t)sp[-2].i > (uint64_t)sp[-1].i; sp--; ip += 1; NEXT(); }
        CASE(CEQ_R) { sp[-2].i = sp[-2].d == sp[-1].d; sp--; ip += 1; NEXT(); }
        CASE(CLT_R) { sp[-2].i = sp[-2].d < sp[-1].d; sp--; ip += 1; NEXT(); }
        CASE(CLE_R) { sp[-2].i = sp[-2].d <= sp[-1].d; sp--; ip += 1; NEXT(); }
        CASE(CGT_R) { sp[-2].i = sp[-2].d > sp[-1].d; sp--; ip += 1; NEXT(); }
        CASE(CGE_R) { sp[-2].i = sp[-2].d >= sp[-1].d; sp--; ip += 1; NEXT(); }
        CASE(CONV_R8) { sp[-1].d = (double)sp[-1].i; ip += 1; NEXT(); }
        CASE(CONV_I8) {
            double d = sp[-1].d;
            /* truncation toward zero; NaN and values outside int64 fault (CIL's conv.ovf.i8) */
            if (!(d > -9223372036854777856.0 && d < 9223372036854775808.0))
                return FAULT(t, m, ip, "conversion overflow (conv.i8)");
            sp[-1].i = (int64_t)d; ip += 1; NEXT();
        }
        CASE(BR) { ip += 5 + READ_I32(ip + 1); NEXT_FLUSH(); }
        CASE(BRTRUE) { sp--; ip += 5 + (sp->i != 0 ? READ_I32(ip + 1) : 0); NEXT_FLUSH(); }
        CASE(BRFALSE) { sp--; ip += 5 + (sp->i == 0 ? READ_I32(ip + 1) : 0); NEXT_FLUSH(); }
        CASE(BEQ) { sp -= 2; ip += 5 + (sp[0].i == sp[1].i ? READ_I32(ip + 1) : 0); NEXT_FLUSH(); }
        CASE(BNE) { sp -= 2; ip += 5 + (sp[0].i != sp[1].i ? READ_I32(ip + 1) : 0); NEXT_FLUSH(); }
        CASE(BLT) { sp -= 2; ip += 5 + (sp[0].i < sp[1].i ? READ_I32(ip + 1) : 0); NEXT_FLUSH(); }
        CASE(BLE) { sp -= 2; ip += 5 + (sp[0].i <= sp[1].i ? READ_I32(ip + 1) : 0); NEXT_FLUSH(); }
        CASE(BGT) { sp -= 2; ip += 5 + (sp[0].i > sp[1].i ? READ_I32(ip + 1) : 0); NEXT_FLUSH(); }
        CASE(BGE) { sp -= 2; ip += 5 + (sp[0].i >= sp[1].i ? READ_I32(ip + 1) : 0); NEXT_FLUSH(); }
        CASE(SWITCH) {
            uint32_t n = READ_U32(ip + 1);
            uint64_t v = (uint64_t)(--sp)->i;
            const uint8_t *end = ip + 5 + 4 * (size_t)n;
            ip = v < n ? end + READ_I32(ip + 5 + 4 * v) : end;
            NEXT_FLUSH();
        }
#define IP_CALL_BODY(HOOKED) {                                                                     \
            const ip_lmethod *callee = &methods[READ_U32(ip + 1)];                                 \
            /* one load for the rare work: precompiled code's first call is its load step (events, \
             * perf map); an async callee gets a task */                                           \
            uint8_t cflags = atomic_load_explicit(&callee->call_flags, memory_order_relaxed);      \
            if (cflags & IP_CALL_FIRST)                                                            \
                ip_first_call(prog, callee);                                                       \
            if (depth >= t->max_frames)                                                            \
                return FAULT(t, m, ip, "stack overflow (call depth)");                             \
            ip_value *cargs = sp - callee->nargs;                                                  \
            ip_value *clocals = cargs + callee->nargs;                                             \
            if ((size_t)(stack_end - clocals) < (size_t)callee->nlocals + callee->max_stack)       \
                return FAULT(t, m, ip, "stack overflow");                                          \
            uint64_t ctask = 0;                                                                    \
            if ((cflags & IP_CALL_ASYNC) && (ctask = ip_task_new(sched)) == 0)                     \
                return FAULT(t, m, ip, "out of memory (a task)");                                  \
            frames[depth].method = m;                                                              \
            frames[depth].ret_ip = ip + 5;                                                         \
            frames[depth].args = args;                                                             \
            frames[depth].task = task;                                                             \
            ip_pub_call(pub, depth, ip, callee->code);                                             \
            ip_count_call(t);                                                                      \
            depth++;                                                                               \
            for (uint32_t i = 0; i < callee->nlocals; i++)                                         \
                clocals[i].i = 0;                                                                  \
            task = ctask;                                                                          \
            m = callee;                                                                            \
            args = cargs;                                                                          \
            sp = clocals + callee->nlocals;                                                        \
            ip = callee->code;                                                                     \
            if (HOOKED)                                                                            \
                ip_prof_event(&run_hooks, t, m, MANTRA_PROF_CALL, args, 0, depth, ip, task);           \
            FLUSH_INSNS(); /* the leaf is published: ip_pub_call stored the callee's entry */      \
            NEXT();                                                                                \
        }
#define IP_RET_BODY(HOOKED) {                                                              \
            leave_v.i = 0;                                                                 \
            leave_push = m->returns;                                                       \
            if (leave_push)                                                                \
                leave_v = sp[-1];                                                          \
            if (HOOKED)                                                                    \
                ip_prof_event(&run_hooks, t, m, MANTRA_PROF_RETURN, NULL, leave_v.i, depth, ip, task); \
            if (m->is_async) { /* the task completes; the caller gets the task */          \
                ip_task_complete(sched, task, leave_v);                                    \
                leave_v.i = (int64_t)task;                                                 \
                leave_push = 1;                                                            \
            }                                                                              \
            goto leave_frame;                                                              \
        }
        CASE(CALL) IP_CALL_BODY(HOOKED_HANDLER)
        CASE(RET) IP_RET_BODY(HOOKED_HANDLER)
#if IP_COMPUTED_GOTO
        L_CALL_H: IP_CALL_BODY(1)
        L_RET_H: IP_RET_BODY(1)
#endif
#undef IP_CALL_BODY
#undef IP_RET_BODY
        /* async methods (docs/interp.md "Async methods"): a suspension saves the frame as a
         * continuation and leaves it as a return would, giving the caller the pending task */
        CASE(YIELD) {
            ip_cont *c = ip_cont_new(m, ip + 1, task, args, sp);
            if (c == NULL)
                return FAULT(t, m, ip, "out of memory (a continuation)");
            SUSPEND_HOOK();
            ip_sched_ready(sched, c);
            goto suspend;
        }
        CASE(DELAY) {
            int64_t ms = (--sp)->i;
            ip_cont *c = ip_cont_new(m, ip + 1, task, args, sp);
            if (c == NULL)
                return FAULT(t, m, ip, "out of memory (a continuation)");
            SUSPEND_HOOK();
            ip_sched_timer(sched, c, ms > 0 ? (uint64_t)ms : 0u);
            goto suspend;
        }
        CASE(AWAIT) {
            uint64_t h = (uint64_t)(--sp)->i;
            ip_value v;
            int st = ip_task_take(sched, h, &v);
            if (st == 1) { /* complete: its result, no suspension */
                *sp++ = v;
                ip += 1;
                NEXT();
            }
            if (st < 0)
                return FAULT(t, m, ip, st == -1 ? "await of a value that is not a task" : "a task awaited twice");
            ip_cont *c = ip_cont_new(m, ip + 1, task, args, sp);
            if (c == NULL)
                return FAULT(t, m, ip, "out of memory (a continuation)");
            SUSPEND_HOOK();
            if (ip_task_wait_with(sched, h, c) != 0) { /* another continuation took it meanwhile */
                free(c);
                return FAULT_LEFT("a task awaited twice");
            }
            goto suspend;
        }
        CASE(WAIT) { /* blocking: runs continuations here until the task is done */
            uint64_t h = (uint64_t)(--sp)->i;
            FLUSH_INSNS();
            ip_value v;
            const char *why = NULL;
            if (ip_wait_task(t, h, sp, depth + 1, &v, &why) != 0)
                return why ? FAULT(t, m, ip, why) : UNWIND_RUN(); /* a continuation's fault: located there */
            ip_pub_depth(pub, (int32_t)depth);
            *sp++ = v;
            ip += 1;
            NEXT();
        }
        suspend: /* SUSPEND_HOOK ran before the continuation was published */
            leave_v.i = (int64_t)task;
            leave_push = 1;
            goto leave_frame;
        leave_frame:
            sp = args; /* the caller's stack without the arguments */
            FLUSH_INSNS();
            if (depth == base) {
                if (result != NULL)
                    memcpy(result, &leave_v, sizeof leave_v);
                return 0;
            }
            depth--;
            ip_pub_depth(pub, (int32_t)depth);
            m = frames[depth].method;
            ip = frames[depth].ret_ip;
            args = frames[depth].args;
            task = frames[depth].task;
            if (leave_push)
                *sp++ = leave_v;
            NEXT();
        CASE(PRINT_I) { out_int(t, (--sp)->i); ip += 1; NEXT(); }
        CASE(PRINT_R) { out_double(t, (--sp)->d); ip += 1; NEXT(); }
        CASE(PRINT_S) {
            uint32_t k = READ_U32(ip + 1);
            out_bytes(t, prog->module->strings[k], prog->module->string_lens[k]);
            ip += 5;
            NEXT();
        }
        CASE(NEWLINE) { out_bytes(t, "\n", 1); ip += 1; NEXT(); }
        /* probes: one uint32_t counter each, wrapping at 2^32 (unsigned arithmetic) */
        CASE(PROBE) { IP_COUNT_PLAIN(READ_U32(ip + 1)); ip += 5; NEXT(); }
        CASE(PROBE_A) { IP_COUNT_ATOMIC(READ_U32(ip + 1)); ip += 5; NEXT(); }
        /* counting branches (inserted by the loader): when taken, bump the target's counter */
#define IP_PBRANCH(NAME, POPS, COND, COUNT)                 \
        CASE(NAME) {                                        \
            sp -= (POPS);                                   \
            if (COND) {                                     \
                COUNT(READ_U32(ip + 5));                    \
                ip += 9 + READ_I32(ip + 1);                 \
            } else {                                        \
                ip += 9;                                    \
            }                                               \
            NEXT_FLUSH();                                   \
        }
        IP_PBRANCH(BR_P, 0, 1, IP_COUNT_PLAIN)
        IP_PBRANCH(BRTRUE_P, 1, sp[0].i != 0, IP_COUNT_PLAIN)
        IP_PBRANCH(BRFALSE_P, 1, sp[0].i == 0, IP_COUNT_PLAIN)
        IP_PBRANCH(BEQ_P, 2, sp[0].i == sp[1].i, IP_COUNT_PLAIN)
        IP_PBRANCH(BNE_P, 2, sp[0].i != sp[1].i, IP_COUNT_PLAIN)
        IP_PBRANCH(BLT_P, 2, sp[0].i < sp[1].i, IP_COUNT_PLAIN)
        IP_PBRANCH(BLE_P, 2, sp[0].i <= sp[1].i, IP_COUNT_PLAIN)
        IP_PBRANCH(BGT_P, 2, sp[0].i > sp[1].i, IP_COUNT_PLAIN)
        IP_PBRANCH(BGE_P, 2, sp[0].i >= sp[1].i, IP_COUNT_PLAIN)
        IP_PBRANCH(BR_PA, 0, 1, IP_COUNT_ATOMIC)
        IP_PBRANCH(BRTRUE_PA, 1, sp[0].i != 0, IP_COUNT_ATOMIC)
        IP_PBRANCH(BRFALSE_PA, 1, sp[0].i == 0, IP_COUNT_ATOMIC)
        IP_PBRANCH(BEQ_PA, 2, sp[0].i == sp[1].i, IP_COUNT_ATOMIC)
        IP_PBRANCH(BNE_PA, 2, sp[0].i != sp[1].i, IP_COUNT_ATOMIC)
        IP_PBRANCH(BLT_PA, 2, sp[0].i < sp[1].i, IP_COUNT_ATOMIC)
        IP_PBRANCH(BLE_PA, 2, sp[0].i <= sp[1].i, IP_COUNT_ATOMIC)
        IP_PBRANCH(BGT_PA, 2, sp[0].i > sp[1].i, IP_COUNT_ATOMIC)
        IP_PBRANCH(BGE_PA, 2, sp[0].i >= sp[1].i, IP_COUNT_ATOMIC)
#if !IP_COMPUTED_GOTO
    default:
        return FAULT(t, m, ip, "bad opcode");
#endif
    }
    return FAULT(t, m, ip, "bad opcode");
}

int ip_run_cont(mantra_interp_thread *t, ip_cont *c, ip_value *sp, uint32_t depth) {
    const ip_lmethod *m = c->method;
    ip_value *stack_end = t->stack + t->stack_slots;
    if (depth >= t->max_frames || (size_t)(stack_end - sp) < (size_t)m->nargs + m->nlocals + m->max_stack + 1u) {
        snprintf(t->err, sizeof t->err, "%s: stack overflow (resuming)", m->src->full_name);
        free(c);
        return MANTRA_ESTATE;
    }
    memcpy(sp, c->slots, c->nslots * sizeof *sp);
    ip_start st = {m, c->ip, sp, sp + c->nslots, depth, c->task, 1};
    if (c->awaited != 0) { /* the awaited task's result, as `await` pushes it */
        ip_value v = {0};
        if (ip_task_take(t->prog->sched, c->awaited, &v) != 1) {
            snprintf(t->err, sizeof t->err, "%s: resumed before its task completed", m->src->full_name);
            free(c);
            return MANTRA_ESTATE;
        }
        *st.sp++ = v;
    }
    free(c);
    ip_pub *pub = &t->pub;
    ip_pub_begin(pub);
    atomic_store_explicit(&pub->ips[depth], (uintptr_t)st.ip, memory_order_release);
    atomic_store_explicit(&pub->depth, (int32_t)depth, memory_order_release);
    ip_pub_end(pub);
    return ip_execute(t, &st, NULL);
}

int ip_wait_task(mantra_interp_thread *t, uint64_t h, ip_value *sp, uint32_t depth, ip_value *v, const char **why) {
    ip_sched *s = t->prog->sched;
    *why = NULL;
    for (;;) {
        int st = ip_task_take(s, h, v);
        if (st == 1)
            return 0;
        if (st < 0) {
            *why = st == -1 ? "wait of a value that is not a task" : "wait of a task another continuation awaits";
            return MANTRA_ESTATE;
        }
        uint64_t wait_ns = 0;
        ip_cont *c = ip_sched_next(s, &wait_ns);
        if (c != NULL) {
            int rc = ip_run_cont(t, c, sp, depth);
            if (rc != 0)
                return rc;
            continue;
        }
        if (wait_ns == UINT64_MAX && atomic_load(&s->running) <= 1) {
            *why = "wait of a task that can never complete (nothing ready, no timer, no other thread)";
            return MANTRA_ESTATE;
        }
        ip_sched_sleep(s, wait_ns, h); /* a timer, or another thread's work (h's completion) */
    }
}
