/* test_pgo_flush - the PGO flush into stopping sessions (runtime/dotnet, dotnet_pgo.h) over the
 * interpreter's counters in the PGO store: traces read back with the reader, chunks reassembled by
 * dotnet-pgo's rules and decoded, exact counts at exact IL offsets (derived by hand below);
 * counter wrap, the method filter, overlapping sessions, shutdown, chunking over 40,000 bytes,
 * collections (window, stale timers, repeats, deltas) and several interpreter threads. Each test
 * runs in its own process (check's fork mode), so the store starts empty. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check_main.h"
#include "dotnet_defs.h" /* MANTRA_PGO_<Name>: the PGO kinds of manifest/dotnet.yaml */
#include "dotnet_pgo.h"
#include "flush_test_util.h"
#include "mantra/pump.h"

#define PGO_PROVIDERS "Microsoft-Windows-DotNETRuntime:0x10000000018:5"
#define NO_PGO_PROVIDERS "Microsoft-Windows-DotNETRuntime:0x18:5"

/* Loops.top: a top-tested loop of 10 iterations (tests/interp/test_interp_probes.c).
 *   IL_0000 ldc.i8 0 / IL_0009 stloc 0
 *   IL_000c head: ldloc 0 / IL_000f ldc.i8 10 / IL_0018 bge done
 *   IL_001d ldloc 0 / IL_0020 ldc.i8 1 / IL_0029 add / IL_002a stloc 0 / IL_002d br head
 *   IL_0032 done: ldloc 0 / IL_0035 ret
 * Mode 1 per run: IL_0000 1, IL_000c 11 (1 fall-in + 10 back edges). Mode 2 adds IL_001d 10 and
 * IL_0032 1. main (call top; ret) has one block: IL_0000 1 per run. */
static const char prog[] = ".module F 5a5a5a5a-0e0f-1011-1213-141516171819\n"
                           ".method Loops.top int64()\n.locals 1\n"
                           "       ldc.i8 0\n       stloc 0\n"
                           "head:  ldloc 0\n       ldc.i8 10\n       bge done\n"
                           "       ldloc 0\n       ldc.i8 1\n       add\n       stloc 0\n       br head\n"
                           "done:  ldloc 0\n       ret\n.end\n"
                           ".method main int64()\n       call top\n       ret\n.end\n";

static char g_dir[512];
static const char *out_path(const char *name) {
    static char p[8][640];
    static int k;
    k = (k + 1) % 8;
    snprintf(p[k], sizeof p[k], "%s/%s", g_dir, name);
    return p[k];
}

static void setup(void) {
    const char *bin = getenv("MANTRA_BINARY_DIR");
    snprintf(g_dir, sizeof g_dir, "%s/pgoflush", bin ? bin : ".");
    mkdir(g_dir, 0777);
    ck_assert_int_eq(mantra_dotnet_pgo_init(0), 0);
}

static mantra_session_id start(const char *providers, const char *path) {
    mantra_session_config c;
    mantra_session_config_init(&c);
    c.providers = providers;
    c.path = path;
    c.flush_interval_ms = 10;
    mantra_session_id id = 0;
    ck_assert_msg(mantra_session_start(&id, &c) == 0, "%s", mantra_session_last_error());
    return id;
}

static void check_method(const ft_trace *t, const char *name, const char *probes) {
    const ft_method *m = ft_find(t, name);
    ck_assert_msg(m != NULL, "no 298 events for %s", name);
    ck_assert_str_eq(m->probes, probes);
    ck_assert_uint_eq(m->complete, 1);
    ck_assert_uint_eq(m->chunks, 1);
    ck_assert(m->in_order);
    ck_assert_uint_eq(m->method_loads, 1);
}

static void flush_mode(int mode, const char *top, const char *file) {
    setup();
    mantra_interp_module *mod;
    mantra_interp_program *p = ft_load(prog, mode, NULL, &mod);
    mantra_session_id s = start(PGO_PROVIDERS, out_path(file));
    ft_run(p, "main", 3);
    ck_assert_int_eq(mantra_session_stop(s), 0);
    ft_trace t;
    ft_read(out_path(file), &t);
    ck_assert(t.complete);
    ck_assert_uint_eq(t.module_loads, 1);
    ck_assert_uint_eq(t.method_loads, 2);
    ck_assert_uint_eq(t.chunks, 2);
    check_method(&t, "top", top);
    check_method(&t, "main", "0000:3");
    ck_assert_uint_eq(ft_find(&t, "top")->token, 0x06000001);
    mantra_pgo_flush_stats st;
    mantra_pgo_flush_last_stats(&st);
    ck_assert_uint_eq(st.methods, 2);
    ck_assert_uint_eq(st.failed, 0);
    mantra_interp_program_free(p);
    mantra_interp_module_free(mod);
}

START_TEST(mode1_counts) { flush_mode(1, "0000:3 000c:33", "mode1.nettrace"); }
END_TEST
START_TEST(mode2_counts) { flush_mode(2, "0000:3 000c:33 001d:30 0032:3", "mode2.nettrace"); }
END_TEST

/* The shared cells start near 2^32: 1 + 11 per run wrap through the flush (unsigned arithmetic;
 * the format carries a FourByte value as a signed int32, read back here as uint32). */
START_TEST(counter_wraps) {
    setup();
    mantra_interp_module *mod;
    mantra_interp_program *p = ft_load(prog, 1, "top", &mod);
    mantra_interp_probes pr;
    ck_assert_int_eq(mantra_interp_program_probes(p, 0, &pr), 0);
    pr.counters[0] = UINT32_MAX;     /* + 1 -> 0 */
    pr.counters[1] = UINT32_MAX - 5; /* + 11 -> 5 */
    mantra_session_id s = start(PGO_PROVIDERS, out_path("wrap.nettrace"));
    ft_run(p, "main", 1);
    ck_assert_int_eq(mantra_session_stop(s), 0);
    ft_trace t;
    ft_read(out_path("wrap.nettrace"), &t);
    check_method(&t, "top", "0000:0 000c:5");
    ck_assert_ptr_null(ft_find(&t, "main")); /* the filter: main has no probes */
    ck_assert_uint_eq(t.method_loads, 1);
    mantra_interp_program_free(p);
    mantra_interp_module_free(mod);
}
END_TEST

/* Two sessions with the keyword, stopped at different times, each get one complete sequence per
 * method with the counts of their own stop; a third without the keyword gets no 298 (and no
 * identity events: the flush writes nothing into it). */
START_TEST(overlapping_sessions) {
    setup();
    mantra_interp_module *mod;
    mantra_interp_program *p = ft_load(prog, 1, NULL, &mod);
    mantra_session_id a = start(PGO_PROVIDERS, out_path("a.nettrace"));
    mantra_session_id b = start(PGO_PROVIDERS, out_path("b.nettrace"));
    mantra_session_id c = start(NO_PGO_PROVIDERS, out_path("c.nettrace"));
    ft_run(p, "main", 1);
    ck_assert_int_eq(mantra_session_stop(a), 0);
    ft_run(p, "main", 1);
    ck_assert_int_eq(mantra_session_stop(b), 0);
    ck_assert_int_eq(mantra_session_stop(c), 0);
    ft_trace t;
    ft_read(out_path("a.nettrace"), &t);
    ck_assert_uint_eq(t.chunks, 2);
    check_method(&t, "top", "0000:1 000c:11");
    check_method(&t, "main", "0000:1");
    ft_read(out_path("b.nettrace"), &t);
    ck_assert_uint_eq(t.chunks, 2);
    check_method(&t, "top", "0000:2 000c:22");
    check_method(&t, "main", "0000:2");
    ft_read(out_path("c.nettrace"), &t);
    ck_assert(t.complete);
    ck_assert_uint_eq(t.chunks, 0);
    ck_assert_uint_eq(t.method_loads, 0);
    ck_assert_uint_eq(t.module_loads, 0);
    mantra_interp_program_free(p);
    mantra_interp_module_free(mod);
}
END_TEST

/* mantra_shutdown with live sessions: each gets the data exactly once; a second shutdown adds
 * nothing. */
START_TEST(shutdown_live_sessions) {
    setup();
    mantra_interp_module *mod;
    mantra_interp_program *p = ft_load(prog, 1, NULL, &mod);
    (void)start(PGO_PROVIDERS, out_path("s1.nettrace"));
    (void)start(PGO_PROVIDERS, out_path("s2.nettrace"));
    ft_run(p, "main", 2);
    mantra_shutdown();
    mantra_shutdown();
    for (int i = 0; i < 2; i++) {
        ft_trace t;
        ft_read(out_path(i ? "s2.nettrace" : "s1.nettrace"), &t);
        ck_assert(t.complete);
        ck_assert_uint_eq(t.chunks, 2);
        check_method(&t, "top", "0000:2 000c:22");
        check_method(&t, "main", "0000:2");
    }
    mantra_interp_program_free(p);
    mantra_interp_module_free(mod);
}
END_TEST

/* A method whose blob exceeds 40,000 bytes: 15,000 records whose count deltas take 5 bytes (7
 * bytes a record, about 105,000 bytes) give 3 chunks, 0, 1, 2|final, in order, and the decoded counts are exact. */
START_TEST(large_chunked) {
    setup();
    enum { N = 15000 };
    mantra_guid g = {0x12345678, 1, 2, {3, 4, 5, 6, 7, 8, 9, 10}};
    mantra_pgo_module *mod;
    mantra_pgo_method *m;
    ck_assert_int_eq(mantra_pgo_module_register("Big", "", &g, &mod), 0);
    ck_assert_int_eq(mantra_pgo_method_register(mod, 0x06000001, "Big", "huge", "void()", 4 * N, &m), 0);
    mantra_pgo_schema *s = calloc(N, sizeof *s);
    for (int i = 0; i < N; i++)
        s[i] = (mantra_pgo_schema){MANTRA_PGO_BasicBlockIntCount, 4 * i, 1, 0};
    ck_assert_int_eq(mantra_pgo_method_instrument(m, s, N), 0);
    free(s);
    for (int i = 0; i < N; i++)
        mantra_pgo_counters_u32(m, (size_t)i)[0] = (uint32_t)(100000 + (i % 2) * 1000000);
    mantra_session_id id = start(PGO_PROVIDERS, out_path("big.nettrace"));
    ck_assert_int_eq(mantra_session_stop(id), 0);
    ft_trace t;
    ft_read(out_path("big.nettrace"), &t);
    const ft_method *fm = ft_find(&t, "huge");
    ck_assert_ptr_nonnull(fm);
    mantra_pgo_flush_stats st;
    mantra_pgo_flush_last_stats(&st);
    ck_assert_uint_gt(st.bytes, 80000);
    ck_assert_uint_le(st.bytes, 120000);
    ck_assert_uint_eq(fm->chunks, 3);
    ck_assert_uint_eq(fm->complete, 1);
    ck_assert(fm->in_order);
    /* the first records (the probes string holds what fits) */
    ck_assert_int_eq(strncmp(fm->probes, "0000:100000 0004:1100000 0008:100000 000c:1100000", 49), 0);
}
END_TEST

/* Collections: collection 1 (window 1 s) stopped at once; collection 2 (window 3 s) must outlive
 * collection 1's deadline (its timer stops by id, and ids carry a generation: collection 2 may
 * even take the same slot), then end by its own window with a complete trace. */
START_TEST(collect_window_and_stale_timer) {
    setup();
    mantra_interp_module *mod;
    mantra_interp_program *p = ft_load(prog, 1, NULL, &mod);
    mantra_session_id c1 = 0, c2 = 0;
    ck_assert_int_eq(mantra_pgo_collect_ex(out_path("c1.nettrace"), 1, 0, &c1), 0);
    int slot1 = mantra_session_bit(c1);
    ck_assert_int_eq(mantra_session_stop(c1), 0);
    ck_assert_int_eq(mantra_pgo_collect_ex(out_path("c2.nettrace"), 3, 0, &c2), 0);
    ck_assert_uint_ne(c1, c2);
    ck_assert_int_eq(mantra_session_bit(c2), slot1); /* the same slot, another generation */
    ft_run(p, "main", 1);
    ft_pump_for(1600); /* past collection 1's deadline */
    ck_assert_int_ge(mantra_session_bit(c2), 0);
    ft_pump_for(2000); /* past collection 2's */
    ck_assert_int_lt(mantra_session_bit(c2), 0);
    ft_trace t;
    ft_read(out_path("c2.nettrace"), &t);
    ck_assert(t.complete);
    check_method(&t, "top", "0000:1 000c:11");
    ft_read(out_path("c1.nettrace"), &t);
    check_method(&t, "top", "0000:0 000c:0");
    ck_assert_int_eq(mantra_pgo_collect(NULL, 1), MANTRA_EINVAL);
    mantra_shutdown(); /* joins the timers' threads */
    mantra_interp_program_free(p);
    mantra_interp_module_free(mod);
}
END_TEST

/* Repeated collections: cumulative by default; with MANTRA_PGO_FLUSH_DELTAS each holds the counts
 * since the previous snapshot (the reset happens as it is read). */
START_TEST(repeated_collections_and_reset) {
    setup();
    mantra_interp_module *mod;
    mantra_interp_program *p = ft_load(prog, 1, NULL, &mod);
    static const struct {
        int runs;
        unsigned flags;
        const char *top;
    } steps[] = {{1, 0, "0000:1 000c:11"},
                 {1, 0, "0000:2 000c:22"},
                 {2, MANTRA_PGO_FLUSH_DELTAS, "0000:4 000c:44"},
                 {1, MANTRA_PGO_FLUSH_DELTAS, "0000:1 000c:11"},
                 {1, 0, "0000:1 000c:11"}};
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "rep%zu.nettrace", i);
        mantra_session_id id = 0;
        ck_assert_int_eq(mantra_pgo_collect_ex(out_path(name), 60, steps[i].flags, &id), 0);
        ft_run(p, "main", steps[i].runs);
        ck_assert_int_eq(mantra_session_stop(id), 0);
        ft_trace t;
        ft_read(out_path(name), &t);
        check_method(&t, "top", steps[i].top);
    }
    mantra_shutdown(); /* the timers of the 60 s windows end here */
    mantra_interp_program_free(p);
    mantra_interp_module_free(mod);
}
END_TEST

/* The same module loaded twice counts on in the same store counters; another probe layout for
 * the same methods is refused. */
START_TEST(reload_counts_on) {
    setup();
    mantra_interp_module *m1, *m2, *m3;
    mantra_interp_program *p1 = ft_load(prog, 1, NULL, &m1);
    ft_run(p1, "main", 1);
    mantra_interp_program_free(p1);
    mantra_interp_program *p2 = ft_load(prog, 1, NULL, &m2);
    ft_run(p2, "main", 1);
    uint32_t counts[2];
    ck_assert_int_eq(mantra_interp_program_counts(p2, 0, counts), 0);
    ck_assert_uint_eq(counts[0], 2);
    ck_assert_uint_eq(counts[1], 22);
    mantra_interp_diag d;
    ck_assert_int_eq(mantra_interp_assemble(prog, strlen(prog), "t.masm", &m3, &d), 0);
    mantra_interp_load_options o;
    mantra_interp_load_options_init(&o);
    o.pgo_mode = 2;
    mantra_interp_program *p3 = NULL;
    ck_assert_int_eq(mantra_interp_load(m3, &o, &p3), MANTRA_ESTATE);
    mantra_session_id s = start(PGO_PROVIDERS, out_path("reload.nettrace"));
    ck_assert_int_eq(mantra_session_stop(s), 0);
    ft_trace t;
    ft_read(out_path("reload.nettrace"), &t);
    check_method(&t, "top", "0000:2 000c:22");
    mantra_interp_program_free(p2);
    mantra_interp_module_free(m1);
    mantra_interp_module_free(m2);
    mantra_interp_module_free(m3);
}
END_TEST

/* Several interpreter threads counting in their own cells of the store: no count lost, and a
 * flush taken while they run sees their counts so far. */
#define THREADS 4
#define RUNS 2000
static void *worker(void *arg) {
    ft_run(arg, "main", RUNS);
    return NULL;
}

START_TEST(threads_no_lost_counts) {
    if (mantra_threadless())
        return; /* no threads to run the interpreter on */
    setup();
    mantra_interp_module *mod;
    mantra_interp_program *p = ft_load(prog, 1, NULL, &mod);
    pthread_t th[THREADS];
    mantra_session_id mid = start(PGO_PROVIDERS, out_path("mid.nettrace"));
    for (int i = 0; i < THREADS; i++)
        ck_assert_int_eq(pthread_create(&th[i], NULL, worker, p), 0);
    ck_assert_int_eq(mantra_session_stop(mid), 0); /* a window ending while they run */
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    mantra_session_id s = start(PGO_PROVIDERS, out_path("threads.nettrace"));
    ck_assert_int_eq(mantra_session_stop(s), 0);
    ft_trace t;
    ft_read(out_path("threads.nettrace"), &t);
    check_method(&t, "top", "0000:8000 000c:88000");
    check_method(&t, "main", "0000:8000");
    ft_read(out_path("mid.nettrace"), &t);
    ck_assert_ptr_nonnull(ft_find(&t, "top")); /* some count, at most the total */
    mantra_interp_program_free(p);
    mantra_interp_module_free(mod);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("pgo_flush");
    TCase *tc = tcase_create("flush");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, mode1_counts);
    tcase_add_test(tc, mode2_counts);
    tcase_add_test(tc, counter_wraps);
    tcase_add_test(tc, overlapping_sessions);
    tcase_add_test(tc, shutdown_live_sessions);
    tcase_add_test(tc, large_chunked);
    tcase_add_test(tc, collect_window_and_stale_timer);
    tcase_add_test(tc, repeated_collections_and_reset);
    tcase_add_test(tc, threads_no_lost_counts);
    tcase_add_test(tc, reload_counts_on);
    suite_add_tcase(s, tc);
    return s;
}

MANTRA_CHECK_MAIN(suite)
