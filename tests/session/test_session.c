/* Sessions (mantra/session.h): the enable rule, file sessions read back, drop accounting,
 * overlapping sessions, and the process listener beside sessions. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "dotnet_registry.h"
#include "dotnet_writers.h"
#include "mantra/reader.h"
#include "mantra/session.h"
#include "session_test_util.h"

#define path_of st_path
#define start_file st_start_file

/* ---- enable rule ---- */
static mantra_event_desc EV(uint64_t kw, uint8_t level) {
    mantra_event_desc d = {"E", "E", kw, 1, 0, level, 0, 0, 0, 0, NULL, 0};
    return d;
}

START_TEST(enable_rule_table) {
    static const struct {
        const char *spec;
        const char *provider;
        uint64_t kw;
        uint8_t level;
        int want;
    } rows[] = {
        {"P:0x10:5", "P", 0x10, 5, 1},           {"P:0x10:5", "P", 0x20, 5, 0},
        {"P:0x10:5", "P", 0, 5, 1},              {"P:0x0:5", "P", 0x10, 4, 0}, /* keywords 0 is not all */
        {"P:0x0:5", "P", 0, 4, 1},               {"P:0x30:4", "P", 0x10, 5, 0},
        {"P:0x30:4", "P", 0x10, 4, 1},           {"P:0x30:4", "P", 0x10, 0, 1}, /* event LogAlways */
        {"P:0x30:0", "P", 0x10, 5, 1},           /* session level 0: all levels */
        {"P", "P", 0x10, 4, 0},                  {"P", "P", 0, 4, 1}, {"P", "P", 0, 5, 0},
        {"P:0x10:5", "Q", 0x10, 5, 0},           {"p:0x10:5", "P", 0x10, 5, 0}, /* case-sensitive */
        {"*", "Anything", 0x8000, 5, 1},         {"*:0x1:1", "Q", 0x2, 1, 0},
        {"*:0x1:1,Q:0x2:5", "Q", 0x2, 1, 0},     /* the catch-all shadows named entries */
        {"A:0x1:5,B:0x2:5", "B", 0x2, 5, 1},     {"A:0x1:5,B:0x2:5", "B", 0x1, 5, 0},
        {"P:0x1:5", "P", 0x100000000000, 5, 1}, /* bits 44..47 masked: keywords 0 */
        {"P:0x1:5", "P", UINT64_MAX, 5, 1},      {"P:0xFF:Verbose", "P", 0x80, 5, 1},
        {"P:0xFF:warning", "P", 0x80, 4, 0},     {"P::5", "P", 0, 5, 1},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        mantra_provider_spec specs[8];
        size_t n, col = 0;
        ck_assert_msg(mantra_provider_spec_parse(rows[i].spec, specs, 8, &n, &col) == 0, "row %zu: %s", i,
                      mantra_session_last_error());
        mantra_event_desc d = EV(rows[i].kw, rows[i].level);
        ck_assert_msg(mantra_provider_spec_enables(specs, n, rows[i].provider, &d) == rows[i].want, "row %zu (%s)",
                      i, rows[i].spec);
    }
}
END_TEST

START_TEST(spec_errors_have_positions) {
    static const struct {
        const char *spec;
        size_t col;
    } rows[] = {{"", 1}, {"A,,B", 3}, {"A:0xZZ", 5}, {"A:0x1:Loud", 7}, {"A:0x11111111111111111", 3},
                {"A:0x1:300", 7}, {"A,", 3}, {":0x1", 1}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        mantra_provider_spec specs[8];
        size_t n, col = 0;
        ck_assert_int_eq(mantra_provider_spec_parse(rows[i].spec, specs, 8, &n, &col), MANTRA_EINVAL);
        ck_assert_msg(col == rows[i].col, "row %zu: col %zu want %zu (%s)", i, col, rows[i].col,
                      mantra_session_last_error());
        char want[32];
        snprintf(want, sizeof want, "providers:%zu: ", rows[i].col);
        ck_assert_msg(strncmp(mantra_session_last_error(), want, strlen(want)) == 0, "%s",
                      mantra_session_last_error());
    }
    mantra_session_config c;
    mantra_session_config_init(&c);
    c.providers = "A:0xQ";
    c.path = path_of("never.nettrace");
    mantra_session_id id;
    ck_assert_int_eq(mantra_session_start(&id, &c), MANTRA_EINVAL);
    ck_assert_int_eq(mantra_session_stop(12345), MANTRA_EINVAL);
}
END_TEST

START_TEST(masks_follow_sessions) {
    mantra_event_state *ml = &mantra_DotNETRuntime_states[0];
    (void)ml;
    const mantra_provider_desc *rt = &mantra_DotNETRuntime_provider;
    uint32_t ml_i = 0;
    for (uint32_t e = 0; e < rt->event_count; e++)
        if (strcmp(rt->events[e].symbol, "MethodLoad_V2") == 0)
            ml_i = e;
    mantra_session_id a = start_file("Microsoft-Windows-DotNETRuntime:0x10:4", path_of("mask-a.nettrace"), 0);
    mantra_session_id b = start_file("Microsoft-DotNETCore-SampleProfiler", path_of("mask-b.nettrace"), 0);
    int ba = mantra_session_bit(a), bb = mantra_session_bit(b);
    ck_assert_int_ne(ba, bb);
    uint64_t m = atomic_load(&rt->states[ml_i].enabled);
    ck_assert_uint_eq(m, UINT64_C(1) << ba);
    ck_assert_uint_eq(atomic_load(&mantra_SampleProfiler_states[0].enabled), UINT64_C(1) << bb);
    ck_assert_int_eq(mantra_session_stop(a), 0);
    ck_assert_uint_eq(atomic_load(&rt->states[ml_i].enabled), 0);
    ck_assert_int_eq(mantra_session_stop(b), 0);
    ck_assert_uint_eq(atomic_load(&mantra_SampleProfiler_states[0].enabled), 0);
}
END_TEST

/* ---- file session, read back; the listener beside it ---- */
typedef struct seen {
    const mantra_event_desc *desc;
    uint8_t payload[256];
    size_t size;
} seen;
static seen g_seen[64];
static size_t g_nseen;
static void listen(void *ctx, const mantra_event_desc *d, const uint8_t *p, size_t n) {
    (void)ctx;
    ck_assert_uint_lt(g_nseen, 64);
    ck_assert_uint_le(n, 256);
    g_seen[g_nseen].desc = d;
    memcpy(g_seen[g_nseen].payload, p, n);
    g_seen[g_nseen++].size = n;
}

/* Every event read (but ProcessInfo) equals, in order, what the process listener saw. */
static size_t g_k;
static void compare_seen(void *ctx, const mantra_trace_event *ev) {
    (void)ctx;
    if (strcmp(ev->metadata->provider, "Microsoft-DotNETCore-EventPipe") == 0)
        return;
    ck_assert_uint_lt(g_k, g_nseen);
    ck_assert_uint_eq(ev->metadata->event_id, g_seen[g_k].desc->id);
    ck_assert_uint_eq(ev->payload_size, g_seen[g_k].size);
    ck_assert_int_eq(memcmp(ev->payload, g_seen[g_k].payload, g_seen[g_k].size), 0);
    g_k++;
}

static void read_trace(const char *path, readback *rb, int compare) {
    g_k = 0;
    st_read_trace(path, rb, compare ? compare_seen : NULL, NULL);
    if (compare)
        ck_assert_uint_eq(g_k, g_nseen);
}

START_TEST(file_session_reads_back) {
    g_nseen = 0;
    mantra_set_listener(listen, NULL);
    mantra_session_id id = start_file("Microsoft-Windows-DotNETRuntime:0x2000000018:5,Microsoft-DotNETCore-SampleProfiler",
                                      path_of("file.nettrace"), 0);
    for (uint32_t i = 0; i < 10; i++) {
        ck_assert_int_eq(mantra_DotNETRuntime_MethodLoad_V2_write(0x2000 + i, 0x7f0010000000u, 0x7f0040000000u + i,
                                                                   0x20, 0x06000009u, 0x8, 1, 0),
                         MANTRA_WRITE_OK);
        ck_assert_int_eq(mantra_DotNETRuntime_MethodLoadVerbose_V2_write(0x1000u + i, 0x7f0010000000u, 0x7f003000u,
                                                                          0x80u + i, 0x06000001u, 0x8, "Hello.Program",
                                                                          i % 2 ? "Fïb" : "Main", "void ()", 1, 0),
                         MANTRA_WRITE_OK);
        ck_assert_int_eq(mantra_DotNETRuntime_R2RGetEntryPointStart_write(0x4000 + i, 1), MANTRA_WRITE_OK);
        ck_assert_int_eq(mantra_SampleProfiler_ThreadSample_write((int32_t)i), MANTRA_WRITE_OK);
    }
    mantra_session_stats st;
    ck_assert_int_eq(mantra_session_stop_stats(id, &st), 0);
    mantra_set_listener(NULL, NULL);
    ck_assert_uint_eq(g_nseen, 40);
    ck_assert_uint_eq(st.attempted, 41); /* + ProcessInfo */
    ck_assert_uint_eq(st.written, 41);
    ck_assert_uint_eq(st.dropped, 0);
    readback rb;
    read_trace(path_of("file.nettrace"), &rb, 1);
    ck_assert_int_eq(rb.complete, 1);
    ck_assert_uint_eq(rb.events, 40);
    ck_assert_uint_eq(rb.process_info, 1);
    ck_assert_uint_eq(rb.dropped, 0);
}
END_TEST

/* ---- drop accounting ---- */
#define NWRITERS 4
#define PER_THREAD 20000
typedef struct wstat {
    uint64_t ok, dropped;
} wstat;
static atomic_int g_running;
static void *writer(void *arg) {
    wstat *w = arg;
    for (uint32_t i = 0; i < PER_THREAD; i++) {
        int rc = mantra_DotNETRuntime_MethodLoad_V2_write(i, 1, 2, 3, 4, 5, 1, 0);
        if (rc == MANTRA_WRITE_OK)
            w->ok++;
        else if (rc == MANTRA_WRITE_DROPPED)
            w->dropped++;
    }
    atomic_fetch_sub(&g_running, 1);
    return NULL;
}

START_TEST(drop_accounting) {
    mantra_session_id id = start_file("Microsoft-Windows-DotNETRuntime:0x10:5", path_of("drop.nettrace"), 64 * 1024);
    pthread_t th[NWRITERS];
    wstat ws[NWRITERS];
    memset(ws, 0, sizeof ws);
    atomic_store(&g_running, NWRITERS);
    for (int i = 0; i < NWRITERS; i++)
        ck_assert_int_eq(pthread_create(&th[i], NULL, writer, &ws[i]), 0);
    st_wait_pumping(&g_running);
    uint64_t ok = 0, dropped = 0;
    for (int i = 0; i < NWRITERS; i++) {
        pthread_join(th[i], NULL);
        ck_assert_uint_eq(ws[i].ok + ws[i].dropped, PER_THREAD);
        ok += ws[i].ok;
        dropped += ws[i].dropped;
    }
    mantra_session_stats st;
    ck_assert_int_eq(mantra_session_stop_stats(id, &st), 0);
    ck_assert_uint_gt(dropped, 0);
    ck_assert_uint_eq(st.attempted, NWRITERS * PER_THREAD + 1);
    ck_assert_uint_eq(st.written + st.dropped, st.attempted);
    readback rb;
    read_trace(path_of("drop.nettrace"), &rb, 0);
    ck_assert_int_eq(rb.complete, 1);
    ck_assert_uint_eq(rb.events, ok);
    /* ProcessInfo may itself be dropped when the budget is full at stop */
    ck_assert_uint_eq(st.written, ok + rb.process_info);
    ck_assert_uint_eq(st.dropped, dropped + 1 - rb.process_info);
    /* every drop is visible to a reader (TraceEvent's rule) as a sequence gap */
    ck_assert_uint_eq(rb.dropped, st.dropped);
}
END_TEST

/* ---- overlapping sessions ---- */
START_TEST(overlapping_sessions) {
    mantra_session_id a = start_file("Microsoft-Windows-DotNETRuntime:0x10:4", path_of("ov-a.nettrace"), 0);
    mantra_session_id b = start_file("Microsoft-Windows-DotNETRuntime:0x2000000000:4,Microsoft-DotNETCore-SampleProfiler",
                                     path_of("ov-b.nettrace"), 0);
    mantra_session_id c = start_file("*", path_of("ov-c.nettrace"), 0);
    for (uint32_t i = 0; i < 5; i++) {
        ck_assert_int_eq(mantra_DotNETRuntime_MethodLoad_V2_write(i, 1, 2, 3, 4, 5, 1, 0), MANTRA_WRITE_OK);
        ck_assert_int_eq(mantra_DotNETRuntime_R2RGetEntryPointStart_write(i, 1), MANTRA_WRITE_OK);
        ck_assert_int_eq(mantra_SampleProfiler_ThreadSample_write(1), MANTRA_WRITE_OK);
    }
    ck_assert_int_eq(mantra_session_stop(b), 0);
    ck_assert_int_eq(mantra_DotNETRuntime_MethodLoad_V2_write(9, 1, 2, 3, 4, 5, 1, 0), MANTRA_WRITE_OK);
    ck_assert_int_eq(mantra_session_stop(a), 0);
    ck_assert_int_eq(mantra_session_stop(c), 0);
    readback ra, rb, rc;
    read_trace(path_of("ov-a.nettrace"), &ra, 0);
    read_trace(path_of("ov-b.nettrace"), &rb, 0);
    read_trace(path_of("ov-c.nettrace"), &rc, 0);
    ck_assert(ra.complete && rb.complete && rc.complete);
    ck_assert_uint_eq(ra.events, 6);
    ck_assert_uint_eq(ra.by_id[141], 6);
    ck_assert_uint_eq(rb.events, 10);
    ck_assert_uint_eq(rb.by_id[160], 5);
    ck_assert_uint_eq(rb.by_id[0], 5);
    ck_assert_uint_eq(rc.events, 16);
    ck_assert_uint_eq(ra.process_info + rb.process_info + rc.process_info, 3);
}
END_TEST

int main(void) {
    st_init_dir("session");
    if (mantra_dotnet_register() != 0) {
        fprintf(stderr, "mantra_dotnet_register failed\n");
        return 1;
    }
    Suite *s = suite_create("session");
    TCase *tc = tcase_create("session");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, enable_rule_table);
    tcase_add_test(tc, spec_errors_have_positions);
    tcase_add_test(tc, masks_follow_sessions);
    tcase_add_test(tc, file_session_reads_back);
    tcase_add_test(tc, drop_accounting);
    tcase_add_test(tc, overlapping_sessions);
    suite_add_tcase(s, tc);
    return run_suite(s, CK_NOFORK);
}
