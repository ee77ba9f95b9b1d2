/* test_profiler_threads - continuations resumed on another interpreter thread: thread A runs
 * examples/programs/async_elt.masm's main (which waits for RunAsync, running ready continuations),
 * thread B pumps the same program's ready continuations (mantra_interp_thread_pump) at the same
 * time. Enter/leave stay balanced on each thread (a depth per thread and method that never leaves
 * 0..1 and ends at 0), the totals are the single-thread ones (25, 3, 3), and B ran segments of its
 * own. Label threads: `make test-tsan` runs it. */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "mantra/profiler.h"
#include "../interp/interp_test_util.h"

enum { NT = 3 };
static const char *const TARGETS[NT] = {"Work", "WorkVoid", "WorkDouble"};
static _Atomic int g_enters[NT], g_leaves[NT], g_failures, g_on_b;
static _Thread_local int t_depth[NT];
static _Thread_local int t_is_b;

static uintptr_t mapper(void *ctx, const mantra_interp_program *p, size_t method, int *hook) {
    (void)ctx;
    mantra_interp_method_identity id;
    mantra_interp_module_method(mantra_interp_program_module(p), method, &id);
    for (int i = 0; i < NT; i++)
        if (strcmp(id.name, TARGETS[i]) == 0)
            return (uintptr_t)i + 1;
    *hook = 0;
    return 0;
}

static void enter(uintptr_t client, int kind, const mantra_prof_info *info) {
    (void)kind;
    (void)info;
    int i = (int)client - 1;
    atomic_fetch_add(&g_enters[i], 1);
    if (t_depth[i]++ != 0)
        atomic_fetch_add(&g_failures, 1);
    if (t_is_b)
        atomic_fetch_add(&g_on_b, 1);
}

static void leave(uintptr_t client, int kind, const mantra_prof_info *info) {
    (void)kind;
    (void)info;
    int i = (int)client - 1;
    atomic_fetch_add(&g_leaves[i], 1);
    if (t_depth[i]-- != 1)
        atomic_fetch_add(&g_failures, 1);
}

typedef struct shared {
    const mantra_interp_program *prog;
    _Atomic int a_done;
    int a_rc;
    _Atomic int bad;
    it_out a_out, b_out;
} shared;

static mantra_interp_thread *new_thread(const mantra_interp_program *p, it_out *out) {
    mantra_interp_thread_options o;
    mantra_interp_thread_options_init(&o);
    o.write = it_write;
    o.write_ctx = out;
    out->len = 0;
    out->buf[0] = '\0';
    mantra_interp_thread *t = NULL;
    ck_assert_int_eq(mantra_interp_thread_create(p, &o, &t), 0);
    return t;
}

static void check_balanced(shared *s) {
    for (int i = 0; i < NT; i++)
        if (t_depth[i] != 0)
            s->bad++;
}

static void *racing_a(void *arg) {
    shared *s = arg;
    mantra_interp_thread *t = new_thread(s->prog, &s->a_out);
    s->a_rc = mantra_interp_thread_run(t, "main", NULL, 0, NULL);
    check_balanced(s);
    mantra_interp_thread_free(t);
    atomic_store(&s->a_done, 1);
    return NULL;
}

static void *pumping_b(void *arg) {
    shared *s = arg;
    t_is_b = 1;
    mantra_interp_thread *t = new_thread(s->prog, &s->b_out);
    /* racing: until A is done; alone: until nothing has been ready for 50 ms */
    int idle = 0;
    while (atomic_load(&s->a_done) == 0 && idle < 50) {
        int n = mantra_interp_thread_pump(t, 1, 1);
        if (n < 0)
            s->bad++;
        idle = n == 0 ? idle + 1 : 0;
    }
    check_balanced(s);
    mantra_interp_thread_free(t);
    return NULL;
}

static void reset(void) {
    for (int i = 0; i < NT; i++) {
        atomic_store(&g_enters[i], 0);
        atomic_store(&g_leaves[i], 0);
    }
    atomic_store(&g_failures, 0);
    atomic_store(&g_on_b, 0);
}

static void check_totals(void) {
    static const int want[NT] = {25, 3, 3};
    ck_assert_int_eq(atomic_load(&g_failures), 0);
    for (int i = 0; i < NT; i++) {
        ck_assert_int_eq(atomic_load(&g_enters[i]), want[i]);
        ck_assert_int_eq(atomic_load(&g_leaves[i]), want[i]);
    }
}

/* The program with two more entries: Start (calls RunAsync, gives its task to the host) and
 * Finish (waits for that task and prints its result). */
static it_prog load_program(void) {
    static const char more[] =
        ".method Tests.Start int64()\n        call RunAsync\n        ret\n.end\n"
        ".method Tests.Finish void(int64)\n        ldarg 0\n        wait\n        print.i\n        newline\n"
        "        ret\n.end\n";
    char *file = it_read_file("examples/programs/async_elt.masm");
    size_t n = strlen(file);
    char *src = malloc(n + sizeof more);
    ck_assert_ptr_nonnull(src);
    memcpy(src, file, n);
    memcpy(src + n, more, sizeof more);
    free(file);
    it_prog p = it_load(src, 0, NULL);
    free(src);
    return p;
}

/* A starts RunAsync and returns; B alone resumes every continuation (it pumps); A then waits for
 * the task, done already, under the profiler's hooks (and the tracer when given). Balanced on each
 * thread, the totals of one thread. */
static void start_pump_finish(mantra_prof_trace_fn tr) {
    it_prog p = load_program();
    mantra_prof_hooks h = {enter, leave, NULL, mapper, NULL, 0};
    ck_assert_int_eq(mantra_prof_start(&h), MANTRA_OK);
    if (tr != NULL)
        ck_assert_int_eq(mantra_prof_trace_start(tr, NULL), MANTRA_OK);
    reset();
    shared s;
    memset(&s, 0, sizeof s);
    s.prog = p.prog;
    mantra_interp_thread *a = new_thread(p.prog, &s.a_out);
    mantra_interp_value task = {0};
    ck_assert_int_eq(mantra_interp_thread_run(a, "Start", NULL, 0, &task), 0);
    ck_assert_int_ne(task.i, 0);
    pthread_t b;
    ck_assert_int_eq(pthread_create(&b, NULL, pumping_b, &s), 0);
    pthread_join(b, NULL);
    ck_assert_int_eq(s.bad, 0);
    ck_assert_str_eq(s.b_out.buf, "total 30, double 2\n"); /* RunAsync's last segment ran on B */
    ck_assert_int_eq(mantra_interp_thread_run(a, "Finish", &task, 1, NULL), 0);
    ck_assert_str_eq(s.a_out.buf, "100\n");
    check_balanced(&s);
    ck_assert_int_eq(s.bad, 0);
    if (tr != NULL)
        mantra_prof_trace_stop(tr, NULL);
    mantra_prof_stop();
    check_totals();
    mantra_interp_thread_free(a);
    it_free(&p);
}

START_TEST(continuations_on_another_thread) {
    start_pump_finish(NULL);
    /* every Enter but Work's first call (made by RunAsync's first segment, on A) was on B: the
     * 24 resumptions and the 6 calls RunAsync's resumed segments made */
    ck_assert_int_eq(atomic_load(&g_on_b), 31 - 1);
}
END_TEST

/* A runs main (which waits, resuming continuations itself) while B pumps the same program: both
 * resume segments, in whatever share the race gives; each thread stays balanced. */
START_TEST(two_threads_racing) {
    it_prog p = load_program();
    mantra_prof_hooks h = {enter, leave, NULL, mapper, NULL, 0};
    ck_assert_int_eq(mantra_prof_start(&h), MANTRA_OK);
    for (int round = 0; round < 10; round++) {
        reset();
        shared s;
        memset(&s, 0, sizeof s);
        s.prog = p.prog;
        pthread_t a, b;
        ck_assert_int_eq(pthread_create(&b, NULL, pumping_b, &s), 0);
        ck_assert_int_eq(pthread_create(&a, NULL, racing_a, &s), 0);
        pthread_join(a, NULL);
        pthread_join(b, NULL);
        ck_assert_int_eq(s.a_rc, 0);
        ck_assert_int_eq(s.bad, 0);
        static char both[2 * sizeof s.a_out.buf + 1];
        snprintf(both, sizeof both, "%s%s", s.a_out.buf, s.b_out.buf);
        ck_assert_msg(strstr(both, "total 30, double 2\n") != NULL && strstr(s.a_out.buf, "100\n") != NULL,
                      "round %d: A printed '%s', B '%s'", round, s.a_out.buf, s.b_out.buf);
        check_totals();
    }
    mantra_prof_stop();
    it_free(&p);
}
END_TEST

/* ---- the tracer (mantra_prof_trace_start) across threads ------------------------------------ */

enum { MAX_REC = 256 };
typedef struct rec {
    int kind, on_b;
    size_t method;
    uint64_t activity, parent;
} rec;
static rec g_recs[MAX_REC];
static _Atomic int g_nrecs;

static void tracer(void *ctx, const mantra_prof_trace_event *e) {
    (void)ctx;
    int i = atomic_fetch_add(&g_nrecs, 1);
    if (i < MAX_REC)
        g_recs[i] = (rec){e->kind, t_is_b, e->method, e->activity, e->parent};
}

/* The same run as continuations_on_another_thread with the tracer beside the profiler's hooks:
 * each async call's activity is the same at its call (on A or B), every suspension and every
 * resumption (on B), whichever thread runs them; Work's calls relate to RunAsync's activity. */
START_TEST(activities_follow_the_logical_call) {
    atomic_store(&g_nrecs, 0);
    start_pump_finish(tracer); /* the profiler's hooks see what they see without the tracer */
    int n = atomic_load(&g_nrecs);
    /* Start + Finish entry runs (2 calls, 2 returns), RunAsync 8 + 8, Work 25 + 25, WorkVoid and
     * WorkDouble 3 + 3 each */
    ck_assert_int_eq(n, 2 * (2 + 8 + 25 + 3 + 3));
    it_prog p = load_program(); /* the same method indexes */
    size_t run_async = (size_t)mantra_interp_module_find(p.mod, "RunAsync");
    size_t work = (size_t)mantra_interp_module_find(p.mod, "Work");
    uint64_t ra = 0;
    int calls = 0, work_calls = 0, resumed_on_b = 0;
    for (int i = 0; i < n; i++) {
        rec *r = &g_recs[i];
        if (r->method == run_async && r->kind == MANTRA_PROF_CALL)
            ra = r->activity;
    }
    ck_assert_uint_ne(ra, 0);
    for (int i = 0; i < n; i++) {
        rec *r = &g_recs[i];
        if (r->activity == 0)
            continue; /* Start and Finish: synchronous */
        if (r->kind == MANTRA_PROF_CALL) {
            calls++;
            /* its later events, on whichever thread: the same activity, none before its call */
            for (int j = 0; j < i; j++)
                ck_assert_uint_ne(g_recs[j].activity, r->activity);
            ck_assert_uint_eq(r->parent, r->method == run_async ? 0u : ra);
            if (r->method == work)
                work_calls++;
        } else {
            int found = 0;
            for (int j = 0; j < i; j++)
                if (g_recs[j].kind == MANTRA_PROF_CALL && g_recs[j].activity == r->activity)
                    found = g_recs[j].method == r->method;
            ck_assert_msg(found, "event %d (kind %d) has an activity no call of its method had", i, r->kind);
            if (r->kind == MANTRA_PROF_RESUME && r->on_b)
                resumed_on_b++;
        }
    }
    ck_assert_int_eq(calls, 8);
    ck_assert_int_eq(work_calls, 5);
    ck_assert_int_eq(resumed_on_b, 7 + 20 + 2 + 2); /* every resumption ran on B */
    it_free(&p);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("profiler_threads");
    TCase *tc = tcase_create("profiler_threads");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, continuations_on_another_thread);
    tcase_add_test(tc, two_threads_racing);
    tcase_add_test(tc, activities_follow_the_logical_call);
    suite_add_tcase(s, tc);
    return s;
}

MANTRA_CHECK_MAIN(suite)
