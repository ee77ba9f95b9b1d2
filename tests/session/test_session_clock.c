/* A clock that steps back in a file session (MANTRA_CLOCK=tsc; the TSC can after a thread moves to
 * a CPU whose TSC lags): a thread's timestamps are clamped to its previous event's
 * (src/session/dispatch.c, row_now), across chunks and buffers, so every event is written, in time
 * order per thread, and the session does not fail. Before, the clamp was the buffer's: the first
 * event of the next buffer kept the older time, the nettrace writer refused it as out of order and
 * the drain failed the whole session. The step is made by moving the scaled TSC's base back
 * (mantra__pal_tsc, platform-internal.h) while no drain pass can read it: a minute's flush
 * interval, a pool that holds the events. Not under ThreadSanitizer (label clock): the drain
 * thread reads that base without ordering against this test's store. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "mantra/event.h"
#include "mantra/reader.h"
#include "mantra/session.h"
#include "platform/platform-internal.h"
#include "session_test_util.h"

static mantra_event_desc g_step[1] = {{"Step", "Step", 1, 1, 0, MANTRA_LEVEL_INFORMATIONAL, 0, 0, 0, 0, NULL, 0}};
static mantra_event_state g_step_states[1];
static const mantra_provider_desc g_step_provider = {
    "Mantra-Test-Step", "Step", {0x73746570, 0x1, 0x2, {1, 2, 3, 4, 5, 6, 7, 8}}, g_step, g_step_states, 1};

#define BEFORE 5000u
#define AFTER 60000u /* about 840 KB of rows: new chunks and buffers while the clock is behind */

typedef struct step_seen {
    uint32_t n, bad;
    int64_t last_ts;
} step_seen;
static void see_step(void *ctx, const mantra_trace_event *ev) {
    step_seen *s = ctx;
    if (strcmp(ev->metadata->provider, "Mantra-Test-Step") != 0)
        return;
    uint32_t v;
    memcpy(&v, ev->payload, 4);
    s->bad += v != s->n || ev->timestamp < s->last_ts; /* one thread: file order is its order */
    s->last_ts = ev->timestamp;
    s->n++;
}

START_TEST(clock_stepping_back_is_clamped) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    ck_assert_int_eq(mantra_register_provider(&g_step_provider), 0);
    const char *path = st_path("step.nettrace");
    mantra_session_config c;
    st_config_file(&c, "Mantra-Test-Step:0x1:5", path, 0);
    c.flush_interval_ms = 60000;
    mantra_session_id id = st_start(&c);
    if (atomic_load(&mantra__pal_tsc.mode) != 2) {
        printf("SKIP clock_stepping_back_is_clamped: the trace clock is %s, not the TSC (no invariant TSC)\n",
               mantra_pal_clock_name());
        ck_assert_int_eq(mantra_session_stop(id), 0);
        return;
    }
    uint32_t i = 0;
    for (; i < BEFORE; i++)
        ck_assert_int_eq(mantra_event_write_bytes(&g_step[0], &g_step_states[0], &i, 4), MANTRA_WRITE_OK);
    mantra__pal_tsc.ns_base -= 10u * MANTRA_PAL_TICKS_PER_SECOND; /* ten seconds back */
    for (; i < BEFORE + AFTER; i++)
        ck_assert_int_eq(mantra_event_write_bytes(&g_step[0], &g_step_states[0], &i, 4), MANTRA_WRITE_OK);
    mantra__pal_tsc.ns_base += 10u * MANTRA_PAL_TICKS_PER_SECOND;
    mantra_session_stats st;
    ck_assert_msg(mantra_session_stop_stats(id, &st) == 0, "%s", mantra_session_last_error());
    ck_assert_uint_eq(st.dropped, 0);
    step_seen s = {0, 0, 0};
    readback rb;
    st_read_trace(path, &rb, see_step, &s);
    ck_assert_int_eq(rb.complete, 1);
    ck_assert_uint_eq(rb.dropped, 0);
    ck_assert_uint_eq(s.n, BEFORE + AFTER);
    ck_assert_uint_eq(s.bad, 0);
#else
    printf("SKIP clock_stepping_back_is_clamped: no inline TSC clock on this platform\n");
#endif
}
END_TEST

static Suite *suite(void) {
    st_init_dir("session_clock");
    Suite *s = suite_create("session_clock");
    TCase *tc = tcase_create("clock");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, clock_stepping_back_is_clamped);
    suite_add_tcase(s, tc);
    return s;
}

MANTRA_CHECK_MAIN_NOFORK(suite)
