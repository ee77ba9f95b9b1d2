/* test_interp_events - the Mantra-Interp provider (runtime/dotnet/interp_events.c, docs/profiler.md
 * "In traces") through a file session: the tracer is installed only while a session enables the
 * provider (and retires at the first event after it stopped); async_elt.masm's trace read back with
 * the reader and decoded with the generated readers of manifest/dotnet.yaml: exact counts of every
 * event and kind, MethodID = the method's entry address, MethodToken, the Start's stack leading
 * with the method's entry, one activity id per logical call and its Starts' related ids. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "dotnet_readers.h"
#include "dotnet_stacks.h"
#include "interp/interp-internal.h" /* ip_trace_active: whether the tracer is installed */
#include "mantra/profiler.h"
#include "session_test_util.h"
#include "../interp/interp_test_util.h"

enum { MAXM = 8, MAXA = 16 };
typedef struct seen {
    const mantra_interp_program *prog;
    int enter[MAXM][6], leave[MAXM][6]; /* by method index and Kind */
    int start[MAXM], stop[MAXM], suspend[MAXM], resume[MAXM];
    mantra_guid acts[MAXA], related[MAXA];
    size_t act_method[MAXA];
    int nacts, bad;
} seen;

static size_t method_of(const seen *s, uint64_t id, uint32_t token) {
    const mantra_interp_module *mod = mantra_interp_program_module(s->prog);
    for (size_t i = 0; i < mantra_interp_module_method_count(mod); i++) {
        const uint8_t *code;
        size_t size;
        mantra_interp_method_identity mi;
        if (mantra_interp_program_code(s->prog, i, &code, &size) == 0 && (uint64_t)(uintptr_t)code == id &&
            mantra_interp_module_method(mod, i, &mi) == 0 && mi.token == token)
            return i;
    }
    return (size_t)-1;
}

static int act_index(seen *s, const mantra_guid *g) {
    for (int i = 0; i < s->nacts; i++)
        if (memcmp(&s->acts[i], g, sizeof *g) == 0)
            return i;
    return -1;
}

static void on_event(void *ctx, const mantra_trace_event *ev) {
    seen *s = ctx;
    if (strcmp(ev->metadata->provider, "Mantra-Interp") != 0)
        return;
    uint32_t id = ev->metadata->event_id;
    if (id <= 2) {
        mantra_Interp_MethodEnter_fields f;
        ck_assert_int_eq(mantra_Interp_MethodEnter_decode(ev->payload, ev->payload_size, 8, &f), 0);
        size_t m = method_of(s, f.MethodID, f.MethodToken);
        ck_assert_msg(m < MAXM && f.Kind >= 1 && f.Kind <= 5, "MethodID %llx token %x kind %u",
                      (unsigned long long)f.MethodID, f.MethodToken, f.Kind);
        (id == 1 ? s->enter : s->leave)[m][f.Kind]++;
        return;
    }
    mantra_Interp_AsyncMethodStart_fields f;
    ck_assert_int_eq(mantra_Interp_AsyncMethodStart_decode(ev->payload, ev->payload_size, 8, &f), 0);
    size_t m = method_of(s, f.MethodID, f.MethodToken);
    ck_assert_uint_lt(m, MAXM);
    int a = act_index(s, &ev->activity_id);
    if (id == 3) {
        ck_assert_int_eq(a, -1); /* a new logical call */
        ck_assert_int_lt(s->nacts, MAXA);
        s->acts[s->nacts] = ev->activity_id;
        s->related[s->nacts] = ev->related_activity_id;
        s->act_method[s->nacts++] = m;
        ck_assert_uint_ge(ev->stack_count, 2);
        ck_assert_uint_eq(mantra_trace_event_ip(ev, 0), f.MethodID); /* the call's stack, its entry first */
        s->start[m]++;
    } else {
        ck_assert_msg(a >= 0 && s->act_method[a] == m, "event %u of method %zu: activity of no Start of it", id, m);
        (id == 4 ? s->stop : id == 5 ? s->suspend : s->resume)[m]++;
    }
}

START_TEST(async_elt_in_a_trace) {
    st_init_dir("profiler_events");
    ck_assert_int_eq(mantra_dotnet_interp_events_init(), 0);
    ck_assert_ptr_null(atomic_load(&ip_trace_active)); /* no session wants the provider */
    char *src = it_read_file("examples/programs/async_elt.masm");
    it_prog p = it_load(src, 0, NULL);
    free(src);
    const char *path = st_path("async_elt.nettrace");
    mantra_session_id sid = st_start_file("Mantra-Interp:0x3:5", path, 0);
    ck_assert_ptr_nonnull(atomic_load(&ip_trace_active)); /* its start hook installed the tracer */
    char err[256];
    it_out out;
    ck_assert_int_eq(it_run(&p, "main", NULL, 0, NULL, &out, err, sizeof err), 0);
    ck_assert_str_eq(out.buf, "total 30, double 2\n100\n");
    ck_assert_int_eq(mantra_session_stop(sid), 0);
    ck_assert_ptr_nonnull(atomic_load(&ip_trace_active));
    /* the next run's first event finds nothing enabled: the tracer retires, later runs have none */
    ck_assert_int_eq(it_run(&p, "main", NULL, 0, NULL, &out, err, sizeof err), 0);
    ck_assert_ptr_null(atomic_load(&ip_trace_active));

    seen s;
    memset(&s, 0, sizeof s);
    s.prog = p.prog;
    readback rb;
    st_read_trace(path, &rb, on_event, &s);
    ck_assert_int_eq(rb.complete, 1);
    ck_assert_uint_eq(rb.dropped, 0);
    const mantra_interp_module *mod = p.mod;
    static const struct { const char *name; int calls, resumes; } want[] = {
        {"main", 1, 0}, {"RunAsync", 1, 7}, {"Work", 5, 20}, {"WorkVoid", 1, 2}, {"WorkDouble", 1, 2}};
    size_t run_async = (size_t)mantra_interp_module_find(mod, "RunAsync");
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        size_t m = (size_t)mantra_interp_module_find(mod, want[k].name);
        ck_assert_int_eq(s.enter[m][MANTRA_PROF_CALL], want[k].calls);
        ck_assert_int_eq(s.enter[m][MANTRA_PROF_RESUME], want[k].resumes);
        ck_assert_int_eq(s.leave[m][MANTRA_PROF_RETURN], want[k].calls);
        ck_assert_int_eq(s.leave[m][MANTRA_PROF_SUSPEND], want[k].resumes);
        ck_assert_int_eq(s.leave[m][MANTRA_PROF_UNWIND], 0);
        int async = strcmp(want[k].name, "main") != 0;
        ck_assert_int_eq(s.start[m], async ? want[k].calls : 0);
        ck_assert_int_eq(s.stop[m], async ? want[k].calls : 0);
        ck_assert_int_eq(s.suspend[m], want[k].resumes);
        ck_assert_int_eq(s.resume[m], want[k].resumes);
    }
    ck_assert_int_eq(s.nacts, 8);
    int ra = -1;
    for (int i = 0; i < s.nacts; i++)
        if (s.act_method[i] == run_async)
            ra = i;
    ck_assert_int_ge(ra, 0);
    static const mantra_guid zero;
    for (int i = 0; i < s.nacts; i++)
        ck_assert(memcmp(&s.related[i], i == ra ? &zero : &s.acts[ra], sizeof zero) == 0);
    mantra_dotnet_interp_events_fini();
    it_free(&p);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("interp_events");
    TCase *tc = tcase_create("interp_events");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, async_elt_in_a_trace);
    suite_add_tcase(s, tc);
    return s;
}

MANTRA_CHECK_MAIN(suite)
