/* test_profiler - async methods and the profiler's enter/leave hooks (mantra/profiler.h,
 * docs/profiler.md): the case of dotnet/runtime PR #131985 (examples/programs/async_elt.masm), its
 * 25/25, 3/3, 3/3 Enter/Leave pairs, MANTRA_EDATAINCOMPLETE exactly on resumption Enters and
 * suspension Leaves, real arguments and return values elsewhere, the unwind of an async method that
 * faults after two suspensions, the mapper's opt-out, the flags' errors, and async semantics
 * (await of a pending task, delay, wait, faults of bad handles). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check_main.h"
#include "interp/async-internal.h" /* struct mantra_prof_info (the refusals' hand-made infos); the scheduler */
#include "mantra/profiler.h"
#include "../interp/interp_test_util.h"

enum { NT = 3 };
static const char *const TARGETS[NT] = {"Work", "WorkVoid", "WorkDouble"};

typedef struct tracker {
    const mantra_interp_module *mod;
    int enters[NT], leaves[NT], depth[NT], failures, unwinds[NT];
    int calls[NT], resumes[NT], returns[NT], suspends[NT];
    int incomplete_enter[NT], incomplete_leave[NT], bad_info;
    int64_t first_arg[NT][8];
    int nfirst[NT];
    int64_t ret[NT][8];
    int nret[NT];
    int mapped;
} tracker;

static tracker g;

static uintptr_t mapper(void *ctx, const mantra_interp_program *p, size_t method, int *hook) {
    (void)ctx;
    mantra_interp_method_identity id;
    mantra_interp_module_method(mantra_interp_program_module(p), method, &id);
    g.mapped++;
    for (int i = 0; i < NT; i++)
        if (strcmp(id.name, TARGETS[i]) == 0)
            return (uintptr_t)i + 1;
    *hook = 0;
    return 0;
}

static void enter(uintptr_t client, int kind, const mantra_prof_info *info) {
    int i = (int)client - 1;
    g.enters[i]++;
    if (g.depth[i]++ != 0)
        g.failures++;
    mantra_interp_value args[4];
    size_t n = 4;
    int rc = mantra_prof_enter_info(info, args, &n);
    if (kind == MANTRA_PROF_CALL) {
        g.calls[i]++;
        if (rc != MANTRA_OK || n != 1)
            g.bad_info++;
        else if (g.nfirst[i] < 8)
            g.first_arg[i][g.nfirst[i]++] = args[0].i;
    } else if (kind == MANTRA_PROF_RESUME) {
        g.resumes[i]++;
        g.incomplete_enter[i] += rc == MANTRA_EDATAINCOMPLETE;
        if (rc != MANTRA_EDATAINCOMPLETE)
            g.bad_info++;
    } else {
        g.bad_info++;
    }
}

static void leave(uintptr_t client, int kind, const mantra_prof_info *info) {
    int i = (int)client - 1;
    g.leaves[i]++;
    if (g.depth[i]-- != 1)
        g.failures++;
    mantra_interp_value v = {.i = 12345};
    int rc = mantra_prof_leave_info(info, &v);
    if (kind == MANTRA_PROF_RETURN) {
        g.returns[i]++;
        if (rc != MANTRA_OK)
            g.bad_info++;
        else if (g.nret[i] < 8)
            g.ret[i][g.nret[i]++] = v.i;
    } else if (kind == MANTRA_PROF_SUSPEND) {
        g.suspends[i]++;
        g.incomplete_leave[i] += rc == MANTRA_EDATAINCOMPLETE;
        if (rc != MANTRA_EDATAINCOMPLETE || v.i != 12345)
            g.bad_info++;
    } else {
        g.bad_info++;
    }
}

static void unwind(uintptr_t client, const mantra_prof_info *info) {
    (void)info;
    int i = (int)client - 1;
    g.unwinds[i]++;
    if (g.depth[i]-- != 1)
        g.failures++;
}

static void start(uint32_t flags) {
    memset(&g, 0, sizeof g);
    mantra_prof_hooks h = {enter, leave, unwind, mapper, NULL, flags};
    ck_assert_int_eq(mantra_prof_start(&h), MANTRA_OK);
}

START_TEST(runtime_async_elt_pairs) {
    char *src = it_read_file("examples/programs/async_elt.masm");
    it_prog p = it_load(src, 0, NULL);
    start(MANTRA_PROF_ENABLE_ARGS | MANTRA_PROF_ENABLE_RETVAL);
    it_out out;
    char err[256];
    ck_assert_int_eq(it_run(&p, "main", NULL, 0, NULL, &out, err, sizeof err), 0);
    mantra_prof_stop();
    ck_assert_str_eq(out.buf, "total 30, double 2\n100\n");
    static const int want[NT] = {25, 3, 3}, calls[NT] = {5, 1, 1};
    for (int i = 0; i < NT; i++) {
        ck_assert_int_eq(g.enters[i], want[i]);
        ck_assert_int_eq(g.leaves[i], want[i]);
        ck_assert_int_eq(g.depth[i], 0);
        ck_assert_int_eq(g.calls[i], calls[i]);
        ck_assert_int_eq(g.returns[i], calls[i]);
        ck_assert_int_eq(g.resumes[i], want[i] - calls[i]);
        ck_assert_int_eq(g.suspends[i], want[i] - calls[i]);
        ck_assert_int_eq(g.incomplete_enter[i], want[i] - calls[i]);
        ck_assert_int_eq(g.incomplete_leave[i], want[i] - calls[i]);
        ck_assert_int_eq(g.unwinds[i], 0);
    }
    ck_assert_int_eq(g.failures, 0);
    ck_assert_int_eq(g.bad_info, 0);
    /* real arguments on first Enter, real return values on final Leave */
    for (int k = 0; k < 5; k++) {
        ck_assert_int_eq(g.first_arg[0][k], 4);
        ck_assert_int_eq(g.ret[0][k], 6); /* 0 + 1 + 2 + 3 */
    }
    ck_assert_int_eq(g.first_arg[1][0], 2);
    ck_assert_int_eq(g.ret[1][0], 0); /* void */
    ck_assert_int_eq(g.first_arg[2][0], 2);
    double d;
    memcpy(&d, &g.ret[2][0], sizeof d);
    ck_assert(d == 2.0); /* 0.5 + 1.5, as a double */
    ck_assert_int_eq(g.mapped, 5); /* once per method of the program */
    it_free(&p);
    free(src);
}
END_TEST

/* Work faults (a division by zero) after two suspensions, awaited by WorkVoid, waited for by main. */
static const char FAULT_SRC[] = ".module F 11111111-2222-4333-8444-555555555555\n"
                                ".method T.Work async int64(int64)\n"
                                "        yield\n"
                                "        yield\n"
                                "        ldc.i8 1\n"
                                "        ldarg 0\n"
                                "        div\n"
                                "        ret\n"
                                ".end\n"
                                ".method T.WorkVoid async void()\n"
                                "        ldc.i8 0\n"
                                "        call Work\n"
                                "        await\n"
                                "        pop\n"
                                "        ret\n"
                                ".end\n"
                                ".method T.main void()\n"
                                "        call WorkVoid\n"
                                "        wait\n"
                                "        pop\n"
                                "        ret\n"
                                ".end\n";

/* An async method faulting after two suspensions: unwind balances its depth, and its caller's. */
START_TEST(fault_after_two_suspensions_unwinds) {
    it_prog p = it_load(FAULT_SRC, 0, NULL);
    start(0);
    char err[256];
    ck_assert_int_eq(it_run(&p, "main", NULL, 0, NULL, NULL, err, sizeof err), MANTRA_ESTATE);
    mantra_prof_stop();
    ck_assert_str_eq(err, "T.Work+IL_000e: integer division by zero");
    /* Work: call, suspend, resume, suspend, resume, unwind; WorkVoid: call, suspend (awaiting) */
    ck_assert_int_eq(g.enters[0], 3);
    ck_assert_int_eq(g.leaves[0], 2);
    ck_assert_int_eq(g.unwinds[0], 1);
    ck_assert_int_eq(g.depth[0], 0);
    ck_assert_int_eq(g.enters[1], 1);
    ck_assert_int_eq(g.leaves[1], 1);
    ck_assert_int_eq(g.depth[1], 0);
    ck_assert_int_eq(g.failures, 0);
    it_free(&p);
}
END_TEST

/* ---- the tracer (mantra_prof_trace_start) ---------------------------------------------------- */

typedef struct trace_rec {
    int kind, is_async;
    size_t method;
    uint64_t activity, parent, method_id;
    size_t stack_depth;
    uint64_t leaf;
} trace_rec;
static trace_rec g_tr[64];
static int g_ntr;

static void tracer(void *ctx, const mantra_prof_trace_event *e) {
    ck_assert_ptr_eq(ctx, &g_ntr);
    if (g_ntr < 64)
        g_tr[g_ntr] = (trace_rec){e->kind, e->is_async, e->method, e->activity, e->parent, e->method_id,
                                  e->stack_depth, e->stack_depth ? e->stack[0] : 0};
    g_ntr++;
}
static void other_tracer(void *ctx, const mantra_prof_trace_event *e) {
    (void)ctx;
    (void)e;
}

/* The tracer alone (no profiler hooks) on an async method that faults after two suspensions: every
 * event of each frame in order, with its kind, its method's id (its entry address), the same
 * activity at the call, each suspension, each resumption and the unwind; the call's parent is the
 * awaiting caller's activity and its stack leads with the method's entry. Refusals. */
START_TEST(tracer_events) {
    ck_assert_int_eq(mantra_prof_trace_start(NULL, NULL), MANTRA_EINVAL);
    ck_assert_int_eq(mantra_prof_trace_start(tracer, &g_ntr), MANTRA_OK);
    ck_assert_int_eq(mantra_prof_trace_start(tracer, &g_ntr), MANTRA_OK); /* the same: a no-op */
    ck_assert_int_eq(mantra_prof_trace_start(other_tracer, NULL), MANTRA_ESTATE);
    mantra_prof_trace_stop(other_tracer, NULL); /* not the one set: it stays */
    it_prog p = it_load(FAULT_SRC, 0, NULL);
    g_ntr = 0;
    char err[256];
    ck_assert_int_eq(it_run(&p, "main", NULL, 0, NULL, NULL, err, sizeof err), MANTRA_ESTATE);
    mantra_prof_trace_stop(tracer, &g_ntr);
    ck_assert_str_eq(err, "T.Work+IL_000e: integer division by zero");
    /* main call; WorkVoid call; Work call, suspend; WorkVoid suspend; Work resume, suspend, resume,
     * unwind; main unwind (the wait's fault ends its run too) */
    static const struct { int kind; const char *m; } want[] = {
        {MANTRA_PROF_CALL, "main"},     {MANTRA_PROF_CALL, "WorkVoid"}, {MANTRA_PROF_CALL, "Work"},
        {MANTRA_PROF_SUSPEND, "Work"},  {MANTRA_PROF_SUSPEND, "WorkVoid"}, {MANTRA_PROF_RESUME, "Work"},
        {MANTRA_PROF_SUSPEND, "Work"},  {MANTRA_PROF_RESUME, "Work"},   {MANTRA_PROF_UNWIND, "Work"},
        {MANTRA_PROF_UNWIND, "main"}};
    int n = (int)(sizeof want / sizeof want[0]);
    ck_assert_int_eq(g_ntr, n);
    const mantra_interp_module *mod = mantra_interp_program_module(p.prog);
    uint64_t act_work = g_tr[2].activity, act_void = g_tr[1].activity;
    ck_assert_uint_ne(act_work, 0);
    ck_assert_uint_ne(act_void, 0);
    ck_assert_uint_ne(act_work, act_void);
    for (int i = 0; i < n; i++) {
        size_t m = (size_t)mantra_interp_module_find(mod, want[i].m);
        ck_assert_msg(g_tr[i].kind == want[i].kind && g_tr[i].method == m, "event %d: kind %d method %zu", i,
                      g_tr[i].kind, g_tr[i].method);
        const uint8_t *code;
        size_t size;
        ck_assert_int_eq(mantra_interp_program_code(p.prog, m, &code, &size), 0);
        ck_assert_uint_eq(g_tr[i].method_id, (uint64_t)(uintptr_t)code);
        int is_main = strcmp(want[i].m, "main") == 0;
        ck_assert_int_eq(g_tr[i].is_async, !is_main);
        ck_assert_uint_eq(g_tr[i].activity, is_main ? 0u : strcmp(want[i].m, "Work") == 0 ? act_work : act_void);
        /* a stack and a parent only on an async method's call */
        int async_call = !is_main && g_tr[i].kind == MANTRA_PROF_CALL;
        ck_assert_uint_eq(g_tr[i].stack_depth, async_call ? (size_t)(strcmp(want[i].m, "Work") == 0 ? 3 : 2) : 0u);
        if (async_call)
            ck_assert_uint_eq(g_tr[i].leaf, g_tr[i].method_id);
    }
    ck_assert_uint_eq(g_tr[1].parent, 0);        /* WorkVoid: called by main, synchronous */
    ck_assert_uint_eq(g_tr[2].parent, act_void); /* Work: its awaiting caller */
    /* stopped: nothing more */
    g_ntr = 0;
    ck_assert_int_eq(it_run(&p, "main", NULL, 0, NULL, NULL, err, sizeof err), MANTRA_ESTATE);
    ck_assert_int_eq(g_ntr, 0);
    it_free(&p);
}
END_TEST

/* Without the flags: MANTRA_EFLAGS; a second start: MANTRA_ESTATE; bad hooks: MANTRA_EINVAL. */
START_TEST(flags_and_refusals) {
    mantra_prof_hooks h = {enter, leave, NULL, NULL, NULL, 0};
    mantra_prof_hooks bad = {NULL, leave, NULL, NULL, NULL, 0};
    ck_assert_int_eq(mantra_prof_start(&bad), MANTRA_EINVAL);
    h.flags = 0x80;
    ck_assert_int_eq(mantra_prof_start(&h), MANTRA_EINVAL);
    h.flags = 0;
    ck_assert_int_eq(mantra_prof_start(&h), MANTRA_OK);
    ck_assert_int_eq(mantra_prof_start(&h), MANTRA_ESTATE);
    mantra_prof_stop();
    mantra_prof_info info = {0};
    mantra_interp_value v[2];
    size_t n = 2;
    info.kind = MANTRA_PROF_CALL;
    ck_assert_int_eq(mantra_prof_enter_info(&info, v, &n), MANTRA_EFLAGS);
    info.flags = MANTRA_PROF_ENABLE_ARGS;
    info.nargs = 3;
    ck_assert_int_eq(mantra_prof_enter_info(&info, v, &n), MANTRA_ERANGE);
    ck_assert_uint_eq(n, 3);
    ck_assert_int_eq(mantra_prof_leave_info(&info, v), MANTRA_EINVAL); /* an Enter's info */
    info.kind = MANTRA_PROF_RETURN;
    ck_assert_int_eq(mantra_prof_leave_info(&info, v), MANTRA_EFLAGS);
    mantra_prof_frame fr;
    ck_assert_int_eq(mantra_prof_frame_info(&info, &fr), MANTRA_EFLAGS);
}
END_TEST

/* Async semantics: an await of a task still pending (delays of 30 and 10 ms awaited in the other
 * order), a wait of something that is not a task, await outside an async method. */
START_TEST(async_semantics) {
    static const char src[] = ".module A 11111111-2222-4333-8444-555555555555\n"
                              ".method T.Sleepy async int64(int64)\n"
                              "        ldarg 0\n"
                              "        delay\n"
                              "        ldarg 0\n"
                              "        ret\n"
                              ".end\n"
                              ".method T.Both async int64()\n"
                              "        ldc.i8 30\n"
                              "        call Sleepy\n"
                              "        ldc.i8 10\n"
                              "        call Sleepy\n"
                              "        await\n"
                              "        print.i\n"
                              "        await\n"
                              "        print.i\n"
                              "        ldc.i8 7\n"
                              "        ret\n"
                              ".end\n"
                              ".method T.main int64()\n"
                              "        call Both\n"
                              "        wait\n"
                              "        ret\n"
                              ".end\n"
                              ".method T.bad void()\n"
                              "        ldc.i8 99\n"
                              "        wait\n"
                              "        pop\n"
                              "        ret\n"
                              ".end\n";
    it_prog p = it_load(src, 0, NULL);
    it_out out;
    char err[256];
    mantra_interp_value r = {0};
    ck_assert_int_eq(it_run(&p, "main", NULL, 0, &r, &out, err, sizeof err), 0);
    ck_assert_str_eq(out.buf, "1030");
    ck_assert_int_eq(r.i, 7);
    /* an async entry: run to completion, its task's result */
    ck_assert_int_eq(it_run(&p, "Both", NULL, 0, &r, &out, err, sizeof err), 0);
    ck_assert_int_eq(r.i, 7);
    ck_assert_int_eq(it_run(&p, "bad", NULL, 0, NULL, NULL, err, sizeof err), MANTRA_ESTATE);
    ck_assert_str_eq(err, "T.bad+IL_0009: wait of a value that is not a task");
    it_free(&p);
    mantra_interp_module *m = NULL;
    mantra_interp_diag d;
    static const char outside[] = ".module B 11111111-2222-4333-8444-555555555555\n"
                                  ".method T.main void()\n"
                                  "        ldc.i8 1\n"
                                  "        await\n"
                                  "        pop\n"
                                  "        ret\n"
                                  ".end\n";
    ck_assert_int_eq(mantra_interp_assemble(outside, strlen(outside), "o.masm", &m, &d), MANTRA_EFORMAT);
    ck_assert_str_eq(d.text, "o.masm:4:9: error: 'await' outside an async method (declare it `.method T.main async void(...)`)");
}
END_TEST

/* ---- fixes of the second reading ------------------------------------------------------------ */

static mantra_interp_thread *g_other; /* a second interpreter thread of the same program */
static int g_pumped_at_suspend, g_suspends_seen;

static void enter_nop(uintptr_t client, int kind, const mantra_prof_info *info) {
    (void)client;
    (void)kind;
    (void)info;
}
/* At a suspension's Leave the continuation must not be published yet: another interpreter thread
 * pumping then (here, this one, nested) finds nothing to resume. */
static void leave_pump(uintptr_t client, int kind, const mantra_prof_info *info) {
    (void)client;
    (void)info;
    if (kind != MANTRA_PROF_SUSPEND)
        return;
    g_suspends_seen++;
    g_pumped_at_suspend += mantra_interp_thread_pump(g_other, 1, 0);
}

START_TEST(suspension_reported_before_its_continuation_is_ready) {
    /* Gen yields three times; at each suspension its own continuation is the only one there is */
    static const char src[] = ".module Y 11111111-2222-4333-8444-555555555555\n"
                              ".method T.Gen async int64(int64)\n"
                              ".locals 1\n"
                              "loop:   ldloc 0\n"
                              "        ldarg 0\n"
                              "        bge done\n"
                              "        yield\n"
                              "        ldloc 0\n"
                              "        ldc.i8 1\n"
                              "        add\n"
                              "        stloc 0\n"
                              "        br loop\n"
                              "done:   ldloc 0\n"
                              "        ret\n"
                              ".end\n"
                              ".method T.main void()\n"
                              "        ldc.i8 3\n"
                              "        call Gen\n"
                              "        wait\n"
                              "        print.i\n"
                              "        newline\n"
                              "        ret\n"
                              ".end\n";
    it_prog p = it_load(src, 0, NULL);
    mantra_interp_thread_options o;
    mantra_interp_thread_options_init(&o);
    ck_assert_int_eq(mantra_interp_thread_create(p.prog, &o, &g_other), 0);
    g_pumped_at_suspend = g_suspends_seen = 0;
    mantra_prof_hooks h = {enter_nop, leave_pump, NULL, NULL, NULL, 0};
    ck_assert_int_eq(mantra_prof_start(&h), MANTRA_OK);
    it_out out;
    char err[256];
    ck_assert_int_eq(it_run(&p, "main", NULL, 0, NULL, &out, err, sizeof err), 0);
    mantra_prof_stop();
    ck_assert_str_eq(out.buf, "3\n");
    ck_assert_int_eq(g_suspends_seen, 3);
    ck_assert_int_eq(g_pumped_at_suspend, 0);
    mantra_interp_thread_free(g_other);
    it_free(&p);
}
END_TEST

/* A profiler started during a run (here from the tracer's callback at RunAsync's call, inside
 * main's run) is called from the next run on (the resumptions), never for a frame whose Enter it
 * did not see. */
static int g_pdepth, g_pbad, g_penters, g_pstarted;
static void p_enter(uintptr_t client, int kind, const mantra_prof_info *info) {
    (void)client;
    (void)kind;
    (void)info;
    g_pdepth++;
    g_penters++;
}
static void p_leave(uintptr_t client, int kind, const mantra_prof_info *info) {
    (void)client;
    (void)kind;
    (void)info;
    if (--g_pdepth < 0)
        g_pbad++;
}
static void tracer_starts_profiler(void *ctx, const mantra_prof_trace_event *e) {
    (void)ctx;
    if (!g_pstarted && e->kind == MANTRA_PROF_CALL && e->is_async) {
        mantra_prof_hooks h = {p_enter, p_leave, NULL, NULL, NULL, 0};
        ck_assert_int_eq(mantra_prof_start(&h), MANTRA_OK);
        g_pstarted = 1;
    }
}

START_TEST(profiler_started_during_a_run_sees_the_next_runs) {
    char *src = it_read_file("examples/programs/async_elt.masm");
    it_prog p = it_load(src, 0, NULL);
    free(src);
    g_pdepth = g_pbad = g_penters = g_pstarted = 0;
    ck_assert_int_eq(mantra_prof_trace_start(tracer_starts_profiler, NULL), MANTRA_OK);
    it_out out;
    char err[256];
    ck_assert_int_eq(it_run(&p, "main", NULL, 0, NULL, &out, err, sizeof err), 0);
    mantra_prof_trace_stop(tracer_starts_profiler, NULL);
    mantra_prof_stop();
    ck_assert_str_eq(out.buf, "total 30, double 2\n100\n");
    ck_assert_int_eq(g_pstarted, 1);
    ck_assert_int_eq(g_pbad, 0);
    ck_assert_int_eq(g_pdepth, 0);
    /* the 31 resumptions, and the 6 calls RunAsync's resumed segments make (Work 2-5, WorkVoid,
     * WorkDouble); not main, RunAsync's first segment or Work's first call */
    ck_assert_int_eq(g_penters, 31 + 6);
    it_free(&p);
}
END_TEST

/* `delay` of the largest int64 (milliseconds): a timer that never comes due (the deadline
 * saturates instead of wrapping round to the past). */
START_TEST(huge_delay_never_comes_due) {
    static const char src[] = ".module D 11111111-2222-4333-8444-555555555555\n"
                              ".method T.Late async void()\n"
                              "        ldc.i8 9223372036854775807\n"
                              "        delay\n"
                              "        print.s \"late\"\n"
                              "        ret\n"
                              ".end\n"
                              ".method T.main void()\n"
                              "        call Late\n"
                              "        pop\n"
                              "        ret\n"
                              ".end\n";
    it_prog p = it_load(src, 0, NULL);
    mantra_interp_thread_options o;
    mantra_interp_thread_options_init(&o);
    it_out out = {0};
    o.write = it_write;
    o.write_ctx = &out;
    mantra_interp_thread *t = NULL;
    ck_assert_int_eq(mantra_interp_thread_create(p.prog, &o, &t), 0);
    ck_assert_int_eq(mantra_interp_thread_run(t, "main", NULL, 0, NULL), 0);
    ck_assert_int_eq(mantra_interp_thread_pump(t, 1, 20), 0); /* nothing due */
    ck_assert_str_eq(out.buf, "");
    mantra_interp_thread_free(t);
    it_free(&p);
}
END_TEST

/* A sleep for the completion of a task that is done already does not sleep (a `wait` whose task
 * another thread completed between its look and its sleep is not left waiting for a timeout). */
START_TEST(sleep_for_a_done_task_returns_at_once) {
    ip_sched *s = ip_sched_new();
    ck_assert_ptr_nonnull(s);
    uint64_t h = ip_task_new(s);
    ip_value v = {.i = 7};
    ck_assert_int_eq(ip_task_complete(s, h, v), 0);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    ip_sched_sleep(s, UINT64_C(5000000000), h); /* would sleep its 1 s cap if it looked no more */
    clock_gettime(CLOCK_MONOTONIC, &b);
    double secs = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
    ck_assert_msg(secs < 0.5, "slept %.3f s", secs);
    ip_sched_fini(s);
    free(s);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("profiler");
    TCase *tc = tcase_create("profiler");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, runtime_async_elt_pairs);
    tcase_add_test(tc, fault_after_two_suspensions_unwinds);
    tcase_add_test(tc, flags_and_refusals);
    tcase_add_test(tc, tracer_events);
    tcase_add_test(tc, suspension_reported_before_its_continuation_is_ready);
    tcase_add_test(tc, profiler_started_during_a_run_sees_the_next_runs);
    tcase_add_test(tc, huge_delay_never_comes_due);
    tcase_add_test(tc, sleep_for_a_done_task_returns_at_once);
    tcase_add_test(tc, async_semantics);
    suite_add_tcase(s, tc);
    return s;
}

MANTRA_CHECK_MAIN(suite)
