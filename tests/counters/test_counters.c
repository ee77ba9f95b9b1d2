/* The counters layer (mantra/counters.h) and the session hooks it stands on: the EventCounters
 * metadata (byte for byte against the .NET runtime's, from the dotnet/diagnostics fixture), the
 * payload bytes of both shapes, events-written rising by exactly what was written, each session at
 * its own interval and only into itself, the start hook and mantra_session_run_exclusive. Waits
 * for ticks but asserts no durations. */
#include <check.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dotnet_registry.h"
#include "dotnet_writers.h"
#include "mantra/counters.h"
#include "mantra/pump.h"
#include "mantra/session.h"

/* ---- a listener session that keeps what Mantra.Runtime writes --------------------------------- */

#define MAX_SEEN 4096
typedef struct seen_event {
    uint32_t id;
    char name[64], series[32];
    double value; /* Mean or Increment */
    float interval_sec;
    size_t size;
    uint8_t payload[512];
} seen_event;

typedef struct sink {
    atomic_int n;
    seen_event ev[MAX_SEEN];
    const uint8_t *meta[3]; /* by event id */
    uint32_t meta_size[3];
} sink;

/* A UTF-16 string (ASCII only here) at p into out; returns the bytes it took. */
static size_t utf16(const uint8_t *p, size_t left, char *out, size_t cap) {
    size_t i = 0, o = 0;
    while (i + 1 < left && (p[i] | p[i + 1])) {
        if (o + 1 < cap)
            out[o++] = (char)p[i];
        i += 2;
    }
    out[o] = 0;
    return i + 2;
}

static void on_record(void *ctx, const mantra_session_record *rec) {
    sink *s = ctx;
    if (strcmp(rec->provider_name, MANTRA_COUNTERS_PROVIDER) != 0)
        return;
    int i = atomic_load(&s->n);
    if (i >= MAX_SEEN || rec->size > sizeof s->ev[0].payload)
        return;
    seen_event *e = &s->ev[i];
    memset(e, 0, sizeof *e);
    e->id = rec->desc->id;
    s->meta[e->id] = rec->desc->metadata;
    s->meta_size[e->id] = rec->desc->metadata_size;
    e->size = rec->size;
    memcpy(e->payload, rec->payload, rec->size);
    const uint8_t *p = rec->payload, *end = p + rec->size;
    char skip[128];
    p += utf16(p, (size_t)(end - p), e->name, sizeof e->name);
    p += utf16(p, (size_t)(end - p), skip, sizeof skip); /* DisplayName */
    if (e->id == 1) {                                     /* Mean */
        memcpy(&e->value, p, 8);
        p += 8 + 8 + 4 + 8 + 8;
        memcpy(&e->interval_sec, p, 4);
        p += 4;
        utf16(p, (size_t)(end - p), e->series, sizeof e->series);
    } else { /* Sum */
        p += utf16(p, (size_t)(end - p), skip, sizeof skip); /* DisplayRateTimeScale */
        memcpy(&e->value, p, 8);
        memcpy(&e->interval_sec, p + 8, 4);
        p += 12;
        p += utf16(p, (size_t)(end - p), skip, sizeof skip); /* Metadata */
        utf16(p, (size_t)(end - p), e->series, sizeof e->series);
    }
    atomic_store(&s->n, i + 1);
}

static mantra_session_id start_listener(const char *providers, sink *s) {
    memset(s, 0, sizeof *s);
    mantra_session_config c;
    mantra_session_config_init(&c);
    c.providers = providers;
    c.output = MANTRA_SESSION_OUTPUT_LISTENER;
    c.listener = on_record;
    c.listener_ctx = s;
    c.flush_interval_ms = 10;
    mantra_session_id id = 0;
    ck_assert_msg(mantra_session_start(&id, &c) == 0, "%s", mantra_session_last_error());
    return id;
}

static void nap(void) {
    if (mantra_threadless())
        mantra_pump();
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL);
}

/* Events of counter `name` seen so far; *sum gets their values' sum. */
static int count_of(sink *s, const char *name, double *sum) {
    int n = atomic_load(&s->n), k = 0;
    double total = 0;
    for (int i = 0; i < n; i++)
        if (strcmp(s->ev[i].name, name) == 0) {
            k++;
            total += s->ev[i].value;
        }
    if (sum)
        *sum = total;
    return k;
}

/* Waits (pumping) until counter `name` has at least k events; fails after 20 s. */
static void wait_events(sink *s, const char *name, int k) {
    for (int i = 0; i < 10000 && count_of(s, name, NULL) < k; i++)
        nap();
    ck_assert_msg(count_of(s, name, NULL) >= k, "no %d events of %s", k, name);
}

static const seen_event *first_of(sink *s, const char *name, double value) {
    int n = atomic_load(&s->n);
    for (int i = 0; i < n; i++)
        if (strcmp(s->ev[i].name, name) == 0 && s->ev[i].value == value)
            return &s->ev[i];
    return NULL;
}

/* Waits (pumping) until counter `name` has carried `value`; fails after 20 s. */
static void wait_value(sink *s, const char *name, double value) {
    for (int i = 0; i < 10000 && !first_of(s, name, value); i++)
        nap();
    ck_assert_msg(first_of(s, name, value) != NULL, "%s never was %g", name, value);
}

/* ---- expected bytes --------------------------------------------------------------------------- */

typedef struct bytes {
    uint8_t b[1024];
    size_t n;
} bytes;
static void put(bytes *o, const void *p, size_t n) {
    memcpy(o->b + o->n, p, n);
    o->n += n;
}
static void put_str(bytes *o, const char *s) {
    for (; *s; s++) {
        uint8_t u[2] = {(uint8_t)*s, 0};
        put(o, u, 2);
    }
    put(o, "\0\0", 2);
}
static void put_u32(bytes *o, uint32_t v) { put(o, &v, 4); }

/* ---- tests -------------------------------------------------------------------------------------- */

/* The mean shape's metadata is the .NET runtime's EventCounters metadata but for the event id
 * (the fixture's is 2, ours 1): same name, keywords, version, level and nested field list. */
START_TEST(metadata_matches_the_runtime) {
    sink *s = calloc(1, sizeof *s);
    mantra_session_id id = start_listener("Mantra.Runtime:0:5:EventCounterIntervalSec=0.02", s);
    wait_events(s, "events-written", 1);
    wait_events(s, "heap-size", 1);
    ck_assert_int_eq(mantra_session_stop(id), 0);
    ck_assert_ptr_nonnull(s->meta[1]);
    ck_assert_ptr_nonnull(s->meta[2]);
    const uint8_t *m = s->meta[1];
    uint32_t msize = s->meta_size[1];
    /* hand-assembled: EventId 1, "EventCounters", keywords 0, version 0, level 0, one field:
     * Object{ Object{ 12 fields } "Payload" } "" */
    static const char *names[] = {"Name", "DisplayName", "Mean", "StandardDeviation", "Count", "Min",
                                  "Max", "IntervalSec", "Series", "CounterType", "Metadata", "DisplayUnits"};
    static const uint32_t types[] = {18, 18, 14, 14, 9, 14, 14, 13, 18, 18, 18, 18};
    bytes *want = calloc(1, sizeof *want);
    put_u32(want, 1);
    put_str(want, "EventCounters");
    put(want, "\0\0\0\0\0\0\0\0", 8);
    put_u32(want, 0);
    put_u32(want, 0);
    put_u32(want, 1);  /* field count */
    put_u32(want, 1);  /* Object */
    put_u32(want, 1);  /* one member */
    put_u32(want, 1);  /* Object */
    put_u32(want, 12); /* twelve members */
    for (int i = 0; i < 12; i++) {
        put_u32(want, types[i]);
        put_str(want, names[i]);
    }
    put_str(want, "Payload");
    put_str(want, "");
    ck_assert_uint_eq(msize, want->n);
    ck_assert_mem_eq(m, want->b, want->n);
    ck_assert_uint_eq(msize, 348);

    /* the same bytes in the real trace, after its provider name "System.Runtime" */
    FILE *f = fopen("../shared/fixtures/nettrace/dotnet-diagnostics/trace.nettrace", "rb");
    if (!f) {
        fprintf(stderr, "SKIP part: ../shared/fixtures absent, metadata not compared with the fixture\n");
    } else {
        static uint8_t buf[1 << 22];
        size_t n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        bytes *prov = calloc(1, sizeof *prov);
        put_str(prov, "System.Runtime");
        size_t at = SIZE_MAX;
        for (size_t i = 0; i + prov->n + msize <= n && at == SIZE_MAX; i++)
            if (memcmp(buf + i, prov->b, prov->n) == 0)
                at = i + prov->n;
        ck_assert_msg(at != SIZE_MAX, "no System.Runtime metadata in the fixture");
        uint32_t fixture_id;
        memcpy(&fixture_id, buf + at, 4);
        ck_assert_uint_eq(fixture_id, 2);
        ck_assert_mem_eq(buf + at + 4, m + 4, msize - 4);
        free(prov);
    }
    free(want);
    free(s);
}
END_TEST

START_TEST(payload_bytes_of_both_shapes) {
    mantra_counter_def g = {"test-gauge", "Test Gauge", "ms", MANTRA_COUNTER_MEAN, NULL, NULL};
    mantra_counter_def r = {"test-total", "Test Total", "B", MANTRA_COUNTER_RATE, NULL, NULL};
    mantra_counter *gc, *rc;
    ck_assert_int_eq(mantra_counter_register(&g, &gc), 0);
    ck_assert_int_eq(mantra_counter_register(&r, &rc), 0);
    mantra_counter_set(gc, 42.5);
    mantra_counter_set(rc, 100); /* the base when the session starts */
    sink *s = malloc(sizeof *s);
    mantra_session_id id = start_listener("Mantra.Runtime:0:5:EventCounterIntervalSec=0.05", s);
    mantra_counter_add(rc, 75); /* one step: a tick between two would split the increment */
    double sum = 0;
    for (int i = 0; i < 10000 && (count_of(s, "test-total", &sum), sum < 75); i++)
        nap();
    ck_assert_double_eq(sum, 75.0);
    ck_assert_int_eq(mantra_session_stop(id), 0);

    const seen_event *e = first_of(s, "test-gauge", 42.5);
    ck_assert_ptr_nonnull(e);
    ck_assert_str_eq(e->series, "Interval=50");
    ck_assert(e->interval_sec > 0.0f);
    bytes *want = calloc(1, sizeof *want);
    double v = 42.5, zero = 0.0;
    int32_t one = 1;
    put_str(want, "test-gauge");
    put_str(want, "Test Gauge");
    put(want, &v, 8);
    put(want, &zero, 8);
    put(want, &one, 4);
    put(want, &v, 8);
    put(want, &v, 8);
    put(want, &e->interval_sec, 4);
    put_str(want, "Interval=50");
    put_str(want, "Mean");
    put_str(want, "");
    put_str(want, "ms");
    ck_assert_uint_eq(e->size, want->n);
    ck_assert_uint_eq(e->size, 22 + 22 + 8 + 8 + 4 + 8 + 8 + 4 + 24 + 10 + 2 + 6);
    ck_assert_mem_eq(e->payload, want->b, want->n);

    e = first_of(s, "test-total", 75.0);
    ck_assert_ptr_nonnull(e);
    want->n = 0;
    v = 75.0;
    put_str(want, "test-total");
    put_str(want, "Test Total");
    put_str(want, "00:00:01");
    put(want, &v, 8);
    put(want, &e->interval_sec, 4);
    put_str(want, "");
    put_str(want, "Interval=50");
    put_str(want, "Sum");
    put_str(want, "B");
    ck_assert_uint_eq(e->size, want->n);
    ck_assert_mem_eq(e->payload, want->b, want->n);
    ck_assert_int_eq(mantra_counter_unregister(gc), 0);
    ck_assert_int_eq(mantra_counter_unregister(rc), 0);
    free(want);
    free(s);
}
END_TEST

START_TEST(events_written_rise_by_what_was_written) {
    sink *s = malloc(sizeof *s);
    mantra_session_id id = start_listener("Mantra.Runtime:0:5:EventCounterIntervalSec=0.02,Mantra-Demo:0x1:5", s);
    for (uint64_t i = 0; i < 1000; i++)
        ck_assert_int_eq(mantra_Demo_Tick_write(7, i), MANTRA_WRITE_OK);
    double sum = 0;
    for (int i = 0; i < 10000 && (count_of(s, "events-written", &sum), sum < 1000); i++)
        nap();
    int ticks = count_of(s, "events-written", NULL);
    wait_events(s, "events-written", ticks + 3); /* three more ticks: the counter events are not counted */
    ck_assert_int_eq(count_of(s, "events-written", &sum) >= ticks + 3, 1);
    ck_assert_double_eq(sum, 1000.0);
    count_of(s, "events-dropped", &sum);
    ck_assert_double_eq(sum, 0.0);
    ck_assert_int_eq(mantra_session_stop(id), 0); /* every tick's events delivered */
    count_of(s, "events-written", &sum);
    ck_assert_double_eq(sum, 1000.0);
    ck_assert_ptr_nonnull(first_of(s, "sessions", 1.0));
    ck_assert_int_eq(count_of(s, "sessions", NULL), count_of(s, "events-written", NULL));
    ck_assert_int_eq(atomic_load(&s->n) % 9, 0);
    free(s);
}
END_TEST

START_TEST(each_session_its_own_interval) {
    sink *a = malloc(sizeof *a), *b = malloc(sizeof *b), *c = malloc(sizeof *c);
    mantra_session_id ia = start_listener("Mantra.Runtime:0:5:EventCounterIntervalSec=0.02", a);
    mantra_session_id ib = start_listener("Mantra.Runtime:0:5:EventCounterIntervalSec=0.1", b);
    mantra_session_id ic = start_listener("Mantra.Runtime:0:5", c); /* no interval: no counters */
    wait_events(b, "sessions", 2);
    wait_value(a, "sessions", 3.0); /* a tick while all three run */
    ck_assert_int_eq(mantra_session_stop(ib), 0);
    ck_assert_int_eq(mantra_session_stop(ic), 0);
    wait_value(a, "sessions", 1.0); /* after the other two stopped */
    ck_assert_int_eq(mantra_session_stop(ia), 0);
    for (int i = 0; i < atomic_load(&a->n); i++)
        ck_assert_str_eq(a->ev[i].series, "Interval=20");
    for (int i = 0; i < atomic_load(&b->n); i++)
        ck_assert_str_eq(b->ev[i].series, "Interval=100");
    ck_assert_int_eq(atomic_load(&c->n), 0);
    /* 9 built-in counters per tick, every tick complete */
    ck_assert_int_eq(atomic_load(&a->n) % 9, 0);
    ck_assert_int_eq(atomic_load(&b->n) % 9, 0);
    free(a);
    free(b);
    free(c);
}
END_TEST

/* ---- the session hooks underneath ---------------------------------------------------------------- */

typedef struct hook_seen {
    int calls;
    mantra_session_info info;
    size_t count;
    char name1[128], args0[64];
} hook_seen;

static void on_start(void *ctx, const mantra_session_info *info, const mantra_provider_spec *specs, size_t count) {
    hook_seen *h = ctx;
    h->calls++;
    h->info = *info;
    h->count = count;
    snprintf(h->name1, sizeof h->name1, "%s", count > 1 ? specs[1].name : "");
    snprintf(h->args0, sizeof h->args0, "%.60s", specs[0].args);
}

static void exclusive_fn(void *ctx, const mantra_session_info *info) {
    hook_seen *h = ctx;
    h->calls++;
    h->info = *info;
    /* this write goes into the one session only (a listener session per sink) */
    ck_assert_int_eq(mantra_Demo_Tick_write(1, 99), MANTRA_WRITE_OK);
}

static atomic_int g_ticks_a, g_ticks_b;
static void count_a(void *ctx, const mantra_session_record *rec) {
    (void)ctx;
    if (strcmp(rec->provider_name, "Mantra-Demo") == 0)
        atomic_fetch_add(&g_ticks_a, 1);
}
static void count_b(void *ctx, const mantra_session_record *rec) {
    (void)ctx;
    if (strcmp(rec->provider_name, "Mantra-Demo") == 0)
        atomic_fetch_add(&g_ticks_b, 1);
}

START_TEST(start_hook_and_exclusive_writes) {
    hook_seen h = {0};
    ck_assert_int_eq(mantra_session_add_start_hook(on_start, &h), 0);
    ck_assert_int_eq(mantra_session_add_start_hook(on_start, &h), 0); /* twice: once */
    mantra_session_config c;
    mantra_session_config_init(&c);
    c.providers = "Mantra-Demo:0x1:5:k=v;w=\"1,2\",Other";
    c.output = MANTRA_SESSION_OUTPUT_LISTENER;
    c.listener = count_a;
    c.flush_interval_ms = 10;
    mantra_session_id a, b;
    ck_assert_int_eq(mantra_session_start(&a, &c), 0);
    ck_assert_int_eq(h.calls, 1);
    ck_assert_uint_eq(h.info.id, a);
    ck_assert_uint_eq(h.info.mask, UINT64_C(1) << mantra_session_bit(a));
    ck_assert_uint_eq(h.info.keywords, 1);
    ck_assert_uint_eq(h.count, 2);
    ck_assert_str_eq(h.args0, "k=v;w=\"1,2\"");
    ck_assert_str_eq(h.name1, "Other");
    ck_assert_int_eq(mantra_session_remove_start_hook(on_start, &h), 0);
    ck_assert_int_eq(mantra_session_remove_start_hook(on_start, &h), MANTRA_EINVAL);
    c.listener = count_b;
    ck_assert_int_eq(mantra_session_start(&b, &c), 0);
    ck_assert_int_eq(h.calls, 1); /* removed */

    hook_seen x = {0};
    ck_assert_int_eq(mantra_session_run_exclusive(b, exclusive_fn, &x), 0);
    ck_assert_int_eq(x.calls, 1);
    ck_assert_uint_eq(x.info.id, b);
    ck_assert_int_eq(mantra_session_run_exclusive(a + 64 * 1000, exclusive_fn, &x), MANTRA_EINVAL);
    ck_assert_int_eq(mantra_session_run_exclusive(a, NULL, &x), MANTRA_EINVAL);
    ck_assert_int_eq(x.calls, 1);
    ck_assert_int_eq(mantra_Demo_Tick_write(1, 100), MANTRA_WRITE_OK); /* both sessions */
    ck_assert_int_eq(mantra_session_stop(a), 0);
    ck_assert_int_eq(mantra_session_stop(b), 0);
    ck_assert_int_eq(atomic_load(&g_ticks_a), 1);
    ck_assert_int_eq(atomic_load(&g_ticks_b), 2);
    ck_assert_int_eq(mantra_session_run_exclusive(b, exclusive_fn, &x), MANTRA_EINVAL); /* stopped */
}
END_TEST

START_TEST(registration_rules) {
    mantra_counter *c;
    mantra_counter_def d = {"", NULL, NULL, MANTRA_COUNTER_MEAN, NULL, NULL};
    ck_assert_int_eq(mantra_counter_register(&d, &c), MANTRA_EINVAL);
    ck_assert_str_eq(mantra_counters_last_error(), "counter name must be 1..63 bytes of [A-Za-z0-9._-]");
    d.name = "has space";
    ck_assert_int_eq(mantra_counter_register(&d, &c), MANTRA_EINVAL);
    d.name = "sessions"; /* built-in */
    ck_assert_int_eq(mantra_counter_register(&d, &c), MANTRA_EINVAL);
    ck_assert_str_eq(mantra_counters_last_error(), "a counter of this name exists");
    d.name = "ok";
    d.kind = 2;
    ck_assert_int_eq(mantra_counter_register(&d, &c), MANTRA_EINVAL);
    d.kind = MANTRA_COUNTER_MEAN;
    ck_assert_int_eq(mantra_counter_unregister(mantra_counter_find("sessions")), MANTRA_EINVAL);
    mantra_counter *many[64];
    int n = 0;
    char names[64][16];
    for (; n < 64; n++) {
        snprintf(names[n], sizeof names[n], "c%d", n);
        d.name = names[n];
        int rc = mantra_counter_register(&d, &many[n]);
        if (rc) {
            ck_assert_int_eq(rc, MANTRA_ENOSPC);
            break;
        }
    }
    ck_assert_int_eq(n, 64 - 9); /* beside the 9 built-in counters */
    ck_assert_ptr_eq(mantra_counter_find("c3"), many[3]);
    mantra_counter_set(many[3], 1.5);
    mantra_counter_add(many[3], 2.25);
    ck_assert_double_eq(mantra_counter_value(many[3]), 3.75);
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(mantra_counter_unregister(many[i]), 0);
    ck_assert_ptr_null(mantra_counter_find("c3"));

    mantra_heap_figures f = {1000, 2000, 5000};
    mantra_counters_set_heap(&f);
    ck_assert_double_eq(mantra_counter_value(mantra_counter_find("heap-size")), 1000.0);
    ck_assert_double_eq(mantra_counter_value(mantra_counter_find("heap-committed")), 2000.0);
    ck_assert_double_eq(mantra_counter_value(mantra_counter_find("alloc-rate")), 5000.0);
    f = (mantra_heap_figures){0, 0, 0};
    mantra_counters_set_heap(&f);
}
END_TEST

int main(void) {
    if (mantra_dotnet_register() != 0 || mantra_counters_init() != 0 || mantra_counters_init() != 0) {
        fprintf(stderr, "init failed: %s\n", mantra_counters_last_error());
        return 1;
    }
    Suite *s = suite_create("counters");
    TCase *tc = tcase_create("counters");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, metadata_matches_the_runtime);
    tcase_add_test(tc, payload_bytes_of_both_shapes);
    tcase_add_test(tc, events_written_rise_by_what_was_written);
    tcase_add_test(tc, each_session_its_own_interval);
    tcase_add_test(tc, start_hook_and_exclusive_writes);
    tcase_add_test(tc, registration_rules);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    mantra_counters_shutdown();
    return failed ? 1 : 0;
}
