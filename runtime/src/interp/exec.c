/* exec.c - the dispatch loop. Computed goto (GCC/Clang labels as values: one indirect jump per
 * instruction, at the end of each handler) where the compiler has it, a switch otherwise
 * (-DMANTRA_INTERP_SWITCH forces the switch). Calls push an interpreter frame on the thread's
 * frame stack and never recurse in C; arguments, locals and the evaluation stack of every frame
 * live on the thread's value stack: [args | locals | stack], the callee's arguments being the
 * values the caller pushed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "interp/exec-internal.h"

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
        goto *labels[*ip];                                                                           \
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
/* A fault ends the run: the instructions dispatched up to it count too. */
#define FAULT(...) (ip_add_insns(t, ninsns), ninsns = 0, fault(__VA_ARGS__))
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

int ip_execute(mantra_interp_thread *t, const ip_lmethod *entry, mantra_interp_value *result) {
    const mantra_interp_program *prog = t->prog;
    const ip_lmethod *methods = prog->methods;
    /* PER_THREAD: the probes go through the thread's own table */
    uint32_t *const *probe_counter = t->local_table ? t->local_table : prog->probe_counter;
    ip_value *stack_end = t->stack + t->stack_slots;
    const ip_lmethod *m = entry;
    /* the entry's arguments are already at t->stack[0 .. nargs) */
    ip_value *args = t->stack;
    ip_value *sp = args + m->nargs; /* the locals, then the evaluation stack */
    if ((size_t)(stack_end - sp) < (size_t)m->nlocals + m->max_stack)
        return fault(t, m, m->code, "stack overflow");
    for (uint32_t i = 0; i < m->nlocals; i++)
        (sp++)->i = 0;
    const uint8_t *ip = m->code;
    ip_frame *frames = t->frames;
    uint32_t depth = 0;
    ip_pub *pub = &t->pub; /* the stack the sampler reads (exec-internal.h) */
    ip_count_call(t); /* the entry run is a call too */
    uint64_t ninsns = 0; /* dispatched since the last FLUSH_INSNS */

#if IP_COMPUTED_GOTO
    static void *const labels[256] = {
#define IP_LABEL_(e, s, k, pop, push) [IP_OP_##e] = &&L_##e,
        IP_OPCODES(IP_LABEL_)
#undef IP_LABEL_
    };
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
        CASE(CALL) {
            const ip_lmethod *callee = &methods[READ_U32(ip + 1)];
            /* precompiled code: the callee's first call is its load step (events, perf map) */
            if (atomic_load_explicit(&callee->first_call_pending, memory_order_relaxed))
                ip_first_call(prog, callee);
            if (depth >= t->max_frames)
                return FAULT(t, m, ip, "stack overflow (call depth)");
            ip_value *cargs = sp - callee->nargs;
            ip_value *clocals = cargs + callee->nargs;
            if ((size_t)(stack_end - clocals) < (size_t)callee->nlocals + callee->max_stack)
                return FAULT(t, m, ip, "stack overflow");
            frames[depth].method = m;
            frames[depth].ret_ip = ip + 5;
            frames[depth].args = args;
            ip_pub_call(pub, depth, ip, callee->code);
            ip_count_call(t);
            depth++;
            for (uint32_t i = 0; i < callee->nlocals; i++)
                clocals[i].i = 0;
            m = callee;
            args = cargs;
            sp = clocals + callee->nlocals;
            ip = callee->code;
            NEXT_FLUSH();
        }
        CASE(RET) {
            ip_value v = {0};
            int returns = m->returns;
            if (returns)
                v = sp[-1];
            sp = args; /* the caller's stack without the arguments */
            FLUSH_INSNS();
            if (depth == 0) {
                if (result != NULL)
                    memcpy(result, &v, sizeof v);
                return 0;
            }
            depth--;
            ip_pub_depth(pub, (int32_t)depth);
            m = frames[depth].method;
            ip = frames[depth].ret_ip;
            args = frames[depth].args;
            if (returns)
                *sp++ = v;
            NEXT();
        }
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
