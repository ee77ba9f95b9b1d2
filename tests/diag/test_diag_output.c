/* The session output the diagnostics server streams through: MANTRA_SESSION_OUTPUT_CALLBACKS
 * (mantra/session.h, runtime/src/session/output.c). The trace goes through the caller's write
 * callback, close is called exactly once at stop, and a refused configuration never calls close. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "dotnet_registry.h"
#include "dotnet_writers.h"
#include "mantra/reader.h"
#include "mantra/session.h"

typedef struct out {
    uint8_t *data;
    size_t size;
    int closes, writes_after_close;
} out;

static int cb_write(void *ctx, const void *data, size_t size, char *err, size_t errlen) {
    (void)err;
    (void)errlen;
    out *o = ctx;
    if (o->closes)
        o->writes_after_close++;
    uint8_t *d = realloc(o->data, o->size + size);
    ck_assert_ptr_nonnull(d);
    memcpy(d + o->size, data, size);
    o->data = d;
    o->size += size;
    return 0;
}

static int cb_close(void *ctx, char *err, size_t errlen) {
    (void)err;
    (void)errlen;
    ((out *)ctx)->closes++;
    return 0;
}

static const mantra_sink_callbacks CB = {cb_write, NULL, cb_close};

START_TEST(callbacks_carry_the_trace) {
    ck_assert_int_eq(mantra_dotnet_register(), 0);
    out o = {0};
    mantra_session_config c;
    mantra_session_config_init(&c);
    c.providers = "Mantra-Demo:0x1:4";
    c.output = MANTRA_SESSION_OUTPUT_CALLBACKS;
    c.sink_callbacks = &CB;
    c.sink_ctx = &o;
    mantra_session_id id;
    ck_assert_int_eq(mantra_session_start(&id, &c), 0);
    for (uint64_t i = 0; i < 25; i++)
        ck_assert_int_eq(mantra_Demo_Tick_write(3, i), 0);
    ck_assert_int_eq(mantra_session_stop(id), 0);
    ck_assert_int_eq(o.closes, 1);
    ck_assert_int_eq(o.writes_after_close, 0);
    ck_assert_mem_eq(o.data, "Nettrace", 8);
    ck_assert_uint_eq(o.data[o.size - 1], 0x01);
    mantra_reader *r = mantra_reader_new(NULL);
    ck_assert_int_eq(mantra_reader_open_memory(r, o.data, o.size), 0);
    const mantra_trace_event *ev;
    int rc, ticks = 0, infos = 0;
    while ((rc = mantra_reader_next(r, &ev)) == 1) {
        ticks += strcmp(ev->metadata->provider, "Mantra-Demo") == 0 && ev->metadata->event_id == 1;
        infos += strcmp(ev->metadata->provider, "Microsoft-DotNETCore-EventPipe") == 0;
    }
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(ticks, 25);
    ck_assert_int_eq(infos, 1);
    mantra_reader_free(r);
    free(o.data);
}
END_TEST

START_TEST(refused_configurations_never_close) {
    out o = {0};
    mantra_session_config c;
    mantra_session_config_init(&c);
    c.providers = "Mantra-Demo:0x1:4";
    c.output = MANTRA_SESSION_OUTPUT_CALLBACKS;
    c.sink_ctx = &o;
    mantra_session_id id = 0;
    ck_assert_int_eq(mantra_session_start(&id, &c), MANTRA_EINVAL); /* no callbacks */
    ck_assert_str_eq(mantra_session_last_error(), "callbacks output needs a write callback");
    const mantra_sink_callbacks no_write = {NULL, NULL, cb_close};
    c.sink_callbacks = &no_write;
    ck_assert_int_eq(mantra_session_start(&id, &c), MANTRA_EINVAL);
    c.sink_callbacks = &CB;
    c.rotate_mb = 1;
    ck_assert_int_eq(mantra_session_start(&id, &c), MANTRA_EINVAL);
    ck_assert_str_eq(mantra_session_last_error(), "rotation needs a file output");
    ck_assert_int_eq(o.closes, 0);
    ck_assert_uint_eq(o.size, 0);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("diag_output");
    TCase *t = tcase_create("callbacks");
    tcase_add_test(t, callbacks_carry_the_trace);
    tcase_add_test(t, refused_configurations_never_close);
    suite_add_tcase(s, t);
    return s;
}

MANTRA_CHECK_MAIN(suite)
