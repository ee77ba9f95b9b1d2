/* Stacks, thread ids and activity ids through sessions (mantra_event_write_ex, mantra/activity.h):
 * every test writes Mantra-Demo Tick events into a file session, reads the trace back and checks
 * exact values, and the exact bytes the nettrace writer put in the file for them: the row header's
 * ActivityID/RelatedActivityID and the StackBlock entries. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "dotnet_registry.h"
#include "dotnet_writers.h"
#include "mantra/activity.h"
#include "mantra/session.h"
#include "platform/platform-internal.h"
#include "session_test_util.h"

#define DEMO_TICKS "Mantra-Demo:0x1:5"

static const mantra_event_desc *tick_desc(mantra_event_state **state) {
    for (uint32_t i = 0; i < mantra_Demo_provider.event_count; i++)
        if (mantra_Demo_events[i].id == 1) {
            *state = &mantra_Demo_states[i];
            return &mantra_Demo_events[i];
        }
    ck_abort_msg("no Tick event");
    return NULL;
}

/* A Tick (Thread, Index) through mantra_event_write_bytes_ex. */
static int tick_ex(uint32_t thread, uint64_t index, const mantra_event_options *o) {
    uint8_t p[12];
    memcpy(p, &thread, 4);
    memcpy(p + 4, &index, 8);
    mantra_event_state *st;
    const mantra_event_desc *d = tick_desc(&st);
    return mantra_event_write_bytes_ex(d, st, p, sizeof p, o);
}

/* The Tick events of a trace, in file order, and the whole file. */
#define MAX_EV 512
typedef struct seen {
    uint32_t n;
    uint64_t index[MAX_EV], thread[MAX_EV], capture[MAX_EV], offset[MAX_EV];
    uint32_t stack_id[MAX_EV];
    size_t frames[MAX_EV];
    uint64_t ips[MAX_EV][4];
    mantra_guid act[MAX_EV], rel[MAX_EV];
} seen;
static seen g_seen;
static uint8_t *g_file;
static size_t g_file_size;

static void load_file(const char *path) {
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    g_file_size = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    free(g_file);
    g_file = malloc(g_file_size);
    ck_assert_uint_eq(fread(g_file, 1, g_file_size, f), g_file_size);
    fclose(f);
}

static void collect(void *ctx, const mantra_trace_event *ev) {
    (void)ctx;
    if (strcmp(ev->metadata->provider, "Mantra-Demo") != 0 || g_seen.n == MAX_EV)
        return;
    uint32_t i = g_seen.n++;
    ck_assert_uint_eq(ev->payload_size, 12);
    memcpy(&g_seen.index[i], ev->payload + 4, 8);
    g_seen.thread[i] = ev->thread_id;
    g_seen.capture[i] = ev->capture_thread_id;
    g_seen.offset[i] = ev->offset;
    g_seen.stack_id[i] = ev->stack_id;
    g_seen.frames[i] = ev->stack_count;
    for (size_t k = 0; k < ev->stack_count && k < 4; k++)
        g_seen.ips[i][k] = mantra_trace_event_ip(ev, k);
    g_seen.act[i] = ev->activity_id;
    g_seen.rel[i] = ev->related_activity_id;
}

static void read_back(const char *path) {
    memset(&g_seen, 0, sizeof g_seen);
    readback rb;
    st_read_trace(path, &rb, collect, NULL);
    ck_assert_int_eq(rb.complete, 1);
    ck_assert_uint_eq(rb.dropped, 0);
    load_file(path);
}

static const mantra_guid A = {0x11223344u, 0x5566u, 0x7788u, {0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x01}};
static const mantra_guid B = {0x01020304u, 0x0506u, 0x0708u, {0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10}};
static const mantra_guid Z;

static int guid_eq(const mantra_guid *a, const mantra_guid *b) { return memcmp(a, b, sizeof *a) == 0; }

/* The 16 wire bytes of A and B (Data1..Data3 little-endian, Data4 as is). */
static const uint8_t A_WIRE[16] = {0x44, 0x33, 0x22, 0x11, 0x66, 0x55, 0x88, 0x77,
                                   0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x01};
static const uint8_t B_WIRE[16] = {0x04, 0x03, 0x02, 0x01, 0x06, 0x05, 0x08, 0x07,
                                   0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10};

/* ---- activity ids -------------------------------------------------------------------------- */

START_TEST(activity_api) {
    mantra_guid g, prev;
    mantra_activity_get(&g);
    ck_assert(guid_eq(&g, &Z));
    ck_assert_int_eq(mantra_activity_set(&A, &prev), MANTRA_OK);
    ck_assert(guid_eq(&prev, &Z));
    mantra_activity_get(&g);
    ck_assert(guid_eq(&g, &A));
    ck_assert_int_eq(mantra_activity_set_related(&B, &prev), MANTRA_OK);
    mantra_activity_get_related(&g);
    ck_assert(guid_eq(&g, &B));
    /* start: a new id current, the previous one related; stop restores both */
    mantra_activity_scope outer, inner;
    mantra_guid id1, id2;
    ck_assert_int_eq(mantra_activity_start(&outer, &id1), MANTRA_OK);
    ck_assert(!guid_eq(&id1, &Z) && !guid_eq(&id1, &A));
    mantra_activity_get(&g);
    ck_assert(guid_eq(&g, &id1));
    mantra_activity_get_related(&g);
    ck_assert(guid_eq(&g, &A));
    ck_assert_int_eq(mantra_activity_start(&inner, &id2), MANTRA_OK);
    ck_assert(!guid_eq(&id2, &id1));
    mantra_activity_get_related(&g);
    ck_assert(guid_eq(&g, &id1));
    mantra_activity_stop(&inner);
    mantra_activity_get(&g);
    ck_assert(guid_eq(&g, &id1));
    mantra_activity_stop(&outer);
    mantra_activity_get(&g);
    ck_assert(guid_eq(&g, &A));
    mantra_activity_get_related(&g);
    ck_assert(guid_eq(&g, &B));
    ck_assert_int_eq(mantra_activity_start(NULL, NULL), MANTRA_EINVAL);
    /* the zero id clears */
    ck_assert_int_eq(mantra_activity_set(NULL, &prev), MANTRA_OK);
    ck_assert(guid_eq(&prev, &A));
    ck_assert_int_eq(mantra_activity_set_related(&Z, NULL), MANTRA_OK);
    mantra_activity_get_related(&g);
    ck_assert(guid_eq(&g, &Z));
}
END_TEST

START_TEST(activity_ids_in_event_headers) {
    const char *path = st_path("activity.nettrace");
    mantra_session_id id = st_start_file(DEMO_TICKS, path, 0);
    ck_assert_int_eq(mantra_Demo_Tick_write(1, 0), MANTRA_WRITE_OK); /* none */
    mantra_activity_set(&A, NULL);
    mantra_activity_set_related(&B, NULL);
    ck_assert_int_eq(mantra_Demo_Tick_write(1, 1), MANTRA_WRITE_OK); /* A, B */
    ck_assert_int_eq(mantra_Demo_Tick_write(1, 2), MANTRA_WRITE_OK); /* A, B again */
    mantra_activity_set_related(NULL, NULL);
    ck_assert_int_eq(mantra_Demo_Tick_write(1, 3), MANTRA_WRITE_OK); /* A, none */
    /* options override the thread's ids */
    mantra_event_options o = {0};
    o.flags = MANTRA_EVENT_OPT_ACTIVITY;
    o.activity_id = &B;
    ck_assert_int_eq(tick_ex(1, 4, &o), MANTRA_WRITE_OK); /* B, none */
    mantra_activity_set(NULL, NULL);
    ck_assert_int_eq(mantra_Demo_Tick_write(1, 5), MANTRA_WRITE_OK); /* none */
    ck_assert_int_eq(mantra_session_stop(id), 0);
    read_back(path);
    ck_assert_uint_eq(g_seen.n, 6);
    const mantra_guid *want_act[6] = {&Z, &A, &A, &A, &B, &Z}, *want_rel[6] = {&Z, &B, &B, &Z, &Z, &Z};
    for (uint32_t i = 0; i < 6; i++) {
        ck_assert_uint_eq(g_seen.index[i], i);
        ck_assert_msg(guid_eq(&g_seen.act[i], want_act[i]), "event %u: activity id", i);
        ck_assert_msg(guid_eq(&g_seen.rel[i], want_rel[i]), "event %u: related activity id", i);
    }
    /* The row headers in the file (NetTraceFormat_v5.md, compressed headers): the events follow one
     * another in one EventBlock, same metadata and payload size, one thread, consecutive sequence
     * numbers and no stack, so each header is: flags, timestamp delta varint, then the GUIDs that
     * changed (0x10 ActivityID, 0x20 RelatedActivityID), then the payload; 0x40 IsSorted is on every
     * row (the session's writer merges in global timestamp order). */
    for (uint32_t i = 1; i < 6; i++) {
        const uint8_t *row = g_file + g_seen.offset[i];
        uint8_t flags = row[0];
        const uint8_t *p = row + 1;
        while (*p & 0x80) /* the timestamp delta */
            p++;
        p++;
        static const uint8_t zero[16];
        switch (i) {
        case 1: /* A and B appear: both flags, both GUIDs, then the payload */
            ck_assert_uint_eq(flags, 0x70);
            ck_assert_int_eq(memcmp(p, A_WIRE, 16), 0);
            ck_assert_int_eq(memcmp(p + 16, B_WIRE, 16), 0);
            p += 32;
            break;
        case 2: /* unchanged: neither flag, no GUID bytes */
            ck_assert_uint_eq(flags, 0x40);
            break;
        case 3: /* related back to zero */
            ck_assert_uint_eq(flags, 0x60);
            ck_assert_int_eq(memcmp(p, zero, 16), 0);
            p += 16;
            break;
        case 4: /* activity B */
            ck_assert_uint_eq(flags, 0x50);
            ck_assert_int_eq(memcmp(p, B_WIRE, 16), 0);
            p += 16;
            break;
        case 5: /* activity back to zero */
            ck_assert_uint_eq(flags, 0x50);
            ck_assert_int_eq(memcmp(p, zero, 16), 0);
            p += 16;
            break;
        }
        uint32_t thread = 1;
        uint64_t index = i;
        ck_assert_int_eq(memcmp(p, &thread, 4), 0); /* the payload follows at once */
        ck_assert_int_eq(memcmp(p + 4, &index, 8), 0);
    }
}
END_TEST

/* ---- stacks and thread ids ------------------------------------------------------------------- */

START_TEST(stacks_and_thread_override) {
    const char *path = st_path("stacks.nettrace");
    mantra_session_id id = st_start_file(DEMO_TICKS, path, 0);
    static const uint64_t s1[3] = {0x1111000000000010u, 0x1111000000000020u, 0x1111000000000030u};
    static const uint64_t s2[2] = {0x2222000000000010u, 0x2222000000000020u};
    mantra_event_options o = {0};
    o.stack = s1;
    o.stack_depth = 3;
    ck_assert_int_eq(tick_ex(1, 0, &o), MANTRA_WRITE_OK);
    o.flags = MANTRA_EVENT_OPT_THREAD_ID;
    o.thread_id = 424242;
    ck_assert_int_eq(tick_ex(1, 1, &o), MANTRA_WRITE_OK); /* same stack, another thread's */
    o.stack = s2;
    o.stack_depth = 2;
    o.flags = 0;
    ck_assert_int_eq(tick_ex(1, 2, &o), MANTRA_WRITE_OK);
    ck_assert_int_eq(tick_ex(1, 3, NULL), MANTRA_WRITE_OK); /* none */
    ck_assert_int_eq(mantra_Demo_Tick_write(1, 4), MANTRA_WRITE_OK);
    /* deeper than MANTRA_MAX_STACK_DEPTH: the leaf-most frames are kept */
    static uint64_t deep[150];
    for (uint32_t k = 0; k < 150; k++)
        deep[k] = 0x3333000000000000u + k;
    o.stack = deep;
    o.stack_depth = 150;
    ck_assert_int_eq(tick_ex(1, 5, &o), MANTRA_WRITE_OK);
    ck_assert_int_eq(mantra_session_stop(id), 0);

    memset(&g_seen, 0, sizeof g_seen);
    readback rb;
    uint64_t me = mantra_pal_thread_id();
    st_read_trace(path, &rb, collect, NULL);
    load_file(path);
    ck_assert_uint_eq(g_seen.n, 6);
    ck_assert_uint_eq(g_seen.frames[0], 3);
    ck_assert_uint_eq(g_seen.ips[0][0], s1[0]);
    ck_assert_uint_eq(g_seen.ips[0][2], s1[2]);
    ck_assert_uint_eq(g_seen.thread[0], me);
    ck_assert_uint_eq(g_seen.capture[0], me);
    /* the override: the event is about thread 424242, recorded by this one */
    ck_assert_uint_eq(g_seen.thread[1], 424242);
    ck_assert_uint_eq(g_seen.capture[1], me);
    ck_assert_uint_eq(g_seen.stack_id[1], g_seen.stack_id[0]); /* one StackBlock entry for both */
    ck_assert_uint_eq(g_seen.frames[2], 2);
    ck_assert_uint_eq(g_seen.ips[2][1], s2[1]);
    ck_assert_uint_ne(g_seen.stack_id[2], g_seen.stack_id[0]);
    ck_assert_uint_eq(g_seen.frames[3], 0);
    ck_assert_uint_eq(g_seen.frames[4], 0);
    ck_assert_uint_eq(g_seen.stack_id[3], g_seen.stack_id[4]); /* the region's empty entry */
    ck_assert_uint_eq(g_seen.frames[5], MANTRA_MAX_STACK_DEPTH);
    ck_assert_uint_eq(g_seen.ips[5][0], deep[0]);

    /* The StackBlock entries in the file: int32 byte size, then the IPs as uint64 LE (pointer
     * size 8): s1 once, s2 once (dotnet/runtime src/native/eventpipe/ep-block.c, stack block). */
    uint8_t e1[4 + 24], e2[4 + 16];
    uint32_t n1 = 24, n2 = 16;
    memcpy(e1, &n1, 4);
    memcpy(e1 + 4, s1, 24);
    memcpy(e2, &n2, 4);
    memcpy(e2 + 4, s2, 16);
    int c1 = 0, c2 = 0;
    for (size_t off = 0; off + sizeof e1 <= g_file_size; off++) {
        c1 += memcmp(g_file + off, e1, sizeof e1) == 0;
        c2 += off + sizeof e2 <= g_file_size && memcmp(g_file + off, e2, sizeof e2) == 0;
    }
    ck_assert_int_eq(c1, 1);
    ck_assert_int_eq(c2, 1);
}
END_TEST

/* A thread's record taken over by a new thread carries no ids of the old one. */
static void *set_and_exit(void *arg) {
    (void)arg;
    mantra_activity_set(&A, NULL);
    return NULL;
}

static void *get_activity(void *arg) {
    mantra_activity_get(arg);
    return NULL;
}

START_TEST(new_thread_has_no_activity) {
    pthread_t th;
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(pthread_create(&th, NULL, set_and_exit, NULL), 0);
        pthread_join(th, NULL);
    }
    mantra_guid g;
    ck_assert_int_eq(pthread_create(&th, NULL, get_activity, &g), 0);
    pthread_join(th, NULL);
    ck_assert(guid_eq(&g, &Z));
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("stacks_write_ex");
    TCase *tc = tcase_create("main");
    tcase_add_test(tc, activity_api);
    tcase_add_test(tc, activity_ids_in_event_headers);
    tcase_add_test(tc, stacks_and_thread_override);
    tcase_add_test(tc, new_thread_has_no_activity);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    mantra_dotnet_register();
    st_init_dir("stacks");
    return run_suite(suite(), CK_FORK_GETENV);
}
