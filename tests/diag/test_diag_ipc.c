/* The diagnostics IPC protocol without sockets (runtime/src/diag/ipc_parse.c, ipc_reply.c,
 * ports.c): the byte examples of ../shared/reference/diagnostics-ipc.md §5 and each command's
 * layout (dotnet/diagnostics, documentation/design-docs/ipc-protocol.md), exactly. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "diag/ipc-internal.h"
#include "check_main.h"
#include "mantra/session.h"
#include "diag/server-internal.h"

#define MAGIC 0x44, 0x4f, 0x54, 0x4e, 0x45, 0x54, 0x5f, 0x49, 0x50, 0x43, 0x5f, 0x56, 0x31, 0x00

/* CollectTracing2 for provider X as dotnet-trace --providers X sends it (reference §5). */
static const uint8_t COLLECT2_X[] = {
    MAGIC, 0x3b, 0x00, 0x02, 0x03, 0x00, 0x00,             /* header, 59 bytes */
    0x00, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01,  /* 256 MB, format 1, rundown 1 */
    0x01, 0x00, 0x00, 0x00,                                /* 1 provider */
    0, 0, 0, 0, 0, 0, 0, 0, 0x04, 0x00, 0x00, 0x00,        /* keywords 0, level 4 */
    0x02, 0x00, 0x00, 0x00, 0x58, 0x00, 0x00, 0x00,        /* "X" */
    0x01, 0x00, 0x00, 0x00, 0x00, 0x00};                   /* arguments "" */

START_TEST(header_of_the_example) {
    dg_header h;
    ck_assert_uint_eq(sizeof COLLECT2_X, 59);
    ck_assert_uint_eq(dg_parse_header(COLLECT2_X, &h), 0);
    ck_assert_uint_eq(h.size, 59);
    ck_assert_uint_eq(h.set, 0x02);
    ck_assert_uint_eq(h.id, 0x03);
    ck_assert_uint_eq(h.reserved, 0);
}
END_TEST

START_TEST(header_errors) {
    uint8_t b[20];
    memcpy(b, COLLECT2_X, 20);
    dg_header h;
    b[3] = 'X'; /* "DOTXET..." */
    ck_assert_uint_eq(dg_parse_header(b, &h), 0x80131386u);
    memcpy(b, COLLECT2_X, 20);
    b[13] = ' '; /* the NUL of the magic is part of it */
    ck_assert_uint_eq(dg_parse_header(b, &h), 0x80131386u);
    memcpy(b, COLLECT2_X, 20);
    b[14] = 19;
    b[15] = 0;
    ck_assert_uint_eq(dg_parse_header(b, &h), 0x80131384u);
}
END_TEST

START_TEST(collect2_example) {
    dg_collect c;
    ck_assert_uint_eq(dg_parse_collect(0x03, COLLECT2_X + 20, sizeof COLLECT2_X - 20, &c), 0);
    ck_assert_uint_eq(c.version, 2);
    ck_assert_uint_eq(c.buffer_mb, 256);
    ck_assert_uint_eq(c.format, 1);
    ck_assert_uint_eq(c.rundown_keywords, 0x80020139u);
    ck_assert_int_eq(c.stackwalk, 1);
    ck_assert_uint_eq(c.count, 1);
    ck_assert_str_eq(c.providers[0].name, "X");
    ck_assert_ptr_null(c.providers[0].args);
    ck_assert_uint_eq(c.providers[0].level, 4);
    char *spec = dg_collect_spec(&c);
    ck_assert_str_eq(spec, "X:0x0:4");
    free(spec);
    dg_collect_free(&c);
}
END_TEST

/* A payload builder for the other versions. */
typedef struct pb {
    uint8_t b[1024];
    size_t n;
} pb;
static void u8(pb *p, uint8_t v) { p->b[p->n++] = v; }
static void u32(pb *p, uint32_t v) {
    for (int i = 0; i < 4; i++)
        u8(p, (uint8_t)(v >> (8 * i)));
}
static void u64(pb *p, uint64_t v) {
    for (int i = 0; i < 8; i++)
        u8(p, (uint8_t)(v >> (8 * i)));
}
static void str(pb *p, const char *s) {
    if (!s) {
        u32(p, 0);
        return;
    }
    u32(p, (uint32_t)strlen(s) + 1);
    for (const char *c = s; *c; c++) {
        u8(p, (uint8_t)*c);
        u8(p, 0);
    }
    u8(p, 0);
    u8(p, 0);
}
static void provider(pb *p, uint64_t kw, uint32_t level, const char *name, const char *args) {
    u64(p, kw);
    u32(p, level);
    str(p, name);
    str(p, args);
}

START_TEST(collect_versions) {
    dg_collect c;
    pb p = {{0}, 0};
    /* v1: buffer, format, providers; rundown default, stackwalk on */
    u32(&p, 64);
    u32(&p, 1);
    u32(&p, 2);
    provider(&p, 0xF, 5, "Mantra-Demo", "Key=Value;B=2");
    provider(&p, 0, 0, "Other", NULL);
    ck_assert_uint_eq(dg_parse_collect(0x02, p.b, p.n, &c), 0);
    ck_assert_uint_eq(c.version, 1);
    ck_assert_uint_eq(c.rundown_keywords, 0x80020139u);
    ck_assert_int_eq(c.stackwalk, 1);
    char *spec = dg_collect_spec(&c);
    ck_assert_str_eq(spec, "Mantra-Demo:0xf:5:Key=Value;B=2,Other:0x0:0");
    free(spec);
    dg_collect_free(&c);

    /* v3: rundown 0, stackwalk 0 */
    p.n = 0;
    u32(&p, 1);
    u32(&p, 1);
    u8(&p, 0);
    u8(&p, 0);
    u32(&p, 1);
    provider(&p, 1, 1, "P", "a,\"b\"");
    ck_assert_uint_eq(dg_parse_collect(0x04, p.b, p.n, &c), 0);
    ck_assert_uint_eq(c.version, 3);
    ck_assert_uint_eq(c.rundown_keywords, 0);
    ck_assert_int_eq(c.stackwalk, 0);
    /* a key holding ',' and '"': no spec reads it back, so none is made (the command answers FAIL) */
    ck_assert_ptr_null(dg_collect_spec(&c));
    dg_collect_free(&c);

    /* v4: explicit rundown keyword, stackwalk byte */
    p.n = 0;
    u32(&p, 1);
    u32(&p, 1);
    u64(&p, 1);
    u8(&p, 1);
    u32(&p, 1);
    provider(&p, 0, 4, "P", NULL);
    ck_assert_uint_eq(dg_parse_collect(0x05, p.b, p.n, &c), 0);
    ck_assert_uint_eq(c.rundown_keywords, 1);
    ck_assert_int_eq(c.stackwalk, 1);
    dg_collect_free(&c);

    /* v5: session type, then v4 fields, providers with an event filter (enable 1, ids 7 and 9) */
    p.n = 0;
    u32(&p, 0);
    u32(&p, 1);
    u32(&p, 1);
    u64(&p, 0);
    u8(&p, 0);
    u32(&p, 1);
    provider(&p, 0, 4, "P", NULL);
    u8(&p, 1);
    u32(&p, 2);
    u32(&p, 7);
    u32(&p, 9);
    ck_assert_uint_eq(dg_parse_collect(0x06, p.b, p.n, &c), 0);
    ck_assert_uint_eq(c.version, 5);
    ck_assert_int_eq(c.providers[0].filter_enable, 1);
    ck_assert_uint_eq(c.providers[0].filter_ids, 2);
    dg_collect_free(&c);
}
END_TEST

/* The filter data dotnet-counters 10.0.750501 sends for `collect -p PID --counters
 * Mantra.Runtime,System.Runtime --refresh-interval 1` (dotnet/diagnostics,
 * src/Microsoft.Diagnostics.Monitoring.EventPipe/Configuration/MetricSourceConfiguration.cs: the
 * EventCounters provider per group, and System.Diagnostics.Metrics with the meters joined by bare
 * commas; `collect` sends no ProcessInfo, so SessionId is a fresh GUID, not SHARED), as captured from
 * the tool by a listening socket: CollectTracing2 of 681 bytes with these three providers. It goes
 * through dg_collect_spec and comes back out of the spec parser value for value. */
START_TEST(counters_filter_round_trip) {
    static const char metrics[] = "SessionId=06f5285e-2a4a-4edb-afb5-a88aef5d18a6;Metrics=Mantra.Runtime,System.Runtime;RefreshInterval=1;"
                                  "MaxTimeSeries=1000;MaxHistograms=10;ClientId=dc252fcb-4278-4124-b664-f885297ef317";
    dg_collect c;
    pb p = {{0}, 0};
    u32(&p, 256); /* CollectTracing2: buffer, format, rundown, providers */
    u32(&p, 1);
    u8(&p, 0);
    u32(&p, 3);
    provider(&p, 0, 4, "Mantra.Runtime", "EventCounterIntervalSec=1");
    provider(&p, 0, 4, "System.Runtime", "EventCounterIntervalSec=1");
    provider(&p, 2, 4, "System.Diagnostics.Metrics", metrics);
    ck_assert_uint_eq(p.n + 20, 681); /* the captured message: 20-byte header + payload */
    ck_assert_uint_eq(dg_parse_collect(0x03, p.b, p.n, &c), 0);
    char *spec = dg_collect_spec(&c);
    ck_assert_ptr_nonnull(spec);
    ck_assert_str_eq(spec, "Mantra.Runtime:0x0:4:EventCounterIntervalSec=1,System.Runtime:0x0:4:EventCounterIntervalSec=1,"
                           "System.Diagnostics.Metrics:0x2:4:SessionId=06f5285e-2a4a-4edb-afb5-a88aef5d18a6;Metrics=\"Mantra.Runtime,System.Runtime\";"
                           "RefreshInterval=1;MaxTimeSeries=1000;MaxHistograms=10;"
                           "ClientId=dc252fcb-4278-4124-b664-f885297ef317");
    mantra_provider_spec ps[4];
    size_t n = 0, col = 0;
    ck_assert_int_eq(mantra_provider_spec_parse(spec, ps, 4, &n, &col), 0);
    ck_assert_uint_eq(n, 3);
    char v[256];
    ck_assert_str_eq(ps[0].name, "Mantra.Runtime");
    ck_assert_uint_eq(ps[0].keywords, 0);
    ck_assert_uint_eq(ps[0].level, 4);
    ck_assert_int_eq(mantra_provider_spec_arg(&ps[0], "EventCounterIntervalSec", v, sizeof v), 1);
    ck_assert_str_eq(v, "1");
    ck_assert_str_eq(ps[2].name, "System.Diagnostics.Metrics");
    ck_assert_uint_eq(ps[2].keywords, 2);
    ck_assert_int_eq(mantra_provider_spec_arg(&ps[2], "Metrics", v, sizeof v), 1);
    ck_assert_str_eq(v, "Mantra.Runtime,System.Runtime");
    ck_assert_int_eq(mantra_provider_spec_arg(&ps[2], "SessionId", v, sizeof v), 1);
    ck_assert_str_eq(v, "06f5285e-2a4a-4edb-afb5-a88aef5d18a6");
    ck_assert_int_eq(mantra_provider_spec_arg(&ps[2], "ClientId", v, sizeof v), 1);
    ck_assert_str_eq(v, "dc252fcb-4278-4124-b664-f885297ef317");
    free(spec);
    dg_collect_free(&c);
}
END_TEST

START_TEST(collect_refusals) {
    dg_collect c;
    pb p = {{0}, 0};
    /* every prefix of the example payload is truncated */
    for (size_t n = 0; n < sizeof COLLECT2_X - 20; n++) {
        ck_assert_uint_eq(dg_parse_collect(0x03, COLLECT2_X + 20, n, &c), 0x80131384u);
        dg_collect_free(&c);
    }
    /* a byte too many */
    memcpy(p.b, COLLECT2_X + 20, sizeof COLLECT2_X - 20);
    p.n = sizeof COLLECT2_X - 20;
    u8(&p, 0);
    ck_assert_uint_eq(dg_parse_collect(0x03, p.b, p.n, &c), 0x80131384u);
    dg_collect_free(&c);
    /* buffer 0, format 2, no providers, level 6, empty name, string without its NUL */
    struct {
        uint32_t buf, fmt, count, level;
        const char *name;
    } bad[] = {{0, 1, 1, 4, "X"}, {1, 2, 1, 4, "X"}, {1, 1, 0, 4, "X"}, {1, 1, 1, 6, "X"}, {1, 1, 1, 4, ""}};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        p.n = 0;
        u32(&p, bad[k].buf);
        u32(&p, bad[k].fmt);
        u32(&p, bad[k].count);
        if (bad[k].count)
            provider(&p, 0, bad[k].level, bad[k].name, NULL);
        ck_assert_uint_eq(dg_parse_collect(0x02, p.b, p.n, &c), 0x80131384u);
        dg_collect_free(&c);
    }
    p.n = 0;
    u32(&p, 1);
    u32(&p, 1);
    u32(&p, 1);
    u64(&p, 0);
    u32(&p, 4);
    u32(&p, 1);
    u8(&p, 'X'); /* one unit that is not NUL */
    u8(&p, 0);
    u32(&p, 0);
    ck_assert_uint_eq(dg_parse_collect(0x02, p.b, p.n, &c), 0x80131384u);
    dg_collect_free(&c);
    /* over 1000 providers */
    p.n = 0;
    u32(&p, 1);
    u32(&p, 1);
    u32(&p, 1001);
    ck_assert_uint_eq(dg_parse_collect(0x02, p.b, p.n, &c), 0x80131384u);
    dg_collect_free(&c);
}
END_TEST

START_TEST(stop_payload) {
    uint64_t id = 0;
    const uint8_t b[9] = {0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0};
    ck_assert_uint_eq(dg_parse_stop(b, 8, &id), 0);
    ck_assert_uint_eq(id, 0x1122334455667788u);
    ck_assert_uint_eq(dg_parse_stop(b, 7, &id), 0x80131384u);
    ck_assert_uint_eq(dg_parse_stop(b, 9, &id), 0x80131384u);
}
END_TEST

START_TEST(fixed_replies) {
    uint8_t out[28];
    const uint8_t unknown[] = {MAGIC, 0x18, 0x00, 0xff, 0xff, 0x00, 0x00, 0x85, 0x13, 0x13, 0x80};
    ck_assert_uint_eq(dg_reply_error(out, 0x80131385u), 24);
    ck_assert_mem_eq(out, unknown, 24);
    const uint8_t ok[] = {MAGIC, 0x1c, 0x00, 0xff, 0x00, 0x00, 0x00, 0x41, 0, 0, 0, 0, 0, 0, 0x02};
    ck_assert_uint_eq(dg_reply_ok_u64(out, 0x0200000000000041u), 28);
    ck_assert_mem_eq(out, ok, 28);
    const uint8_t ok0[] = {MAGIC, 0x18, 0x00, 0xff, 0x00, 0x00, 0x00, 0, 0, 0, 0};
    ck_assert_uint_eq(dg_reply_ok_i32(out, 0), 24);
    ck_assert_mem_eq(out, ok0, 24);
}
END_TEST

START_TEST(process_info_replies) {
    dg_process_facts f = {0x1234, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, "a b", "Linux", "x64",
                          "", "", ""};
    dg_buf b = {0};
    ck_assert_int_eq(dg_reply_process_info(&b, 1, &f), 0);
    const uint8_t v1[] = {MAGIC, 0x54, 0x00, 0xff, 0x00, 0x00, 0x00,
                          0x34, 0x12, 0, 0, 0, 0, 0, 0, /* pid */
                          1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
                          4, 0, 0, 0, 'a', 0, ' ', 0, 'b', 0, 0, 0,
                          6, 0, 0, 0, 'L', 0, 'i', 0, 'n', 0, 'u', 0, 'x', 0, 0, 0,
                          4, 0, 0, 0, 'x', 0, '6', 0, '4', 0, 0, 0};
    ck_assert_uint_eq(b.size, sizeof v1);
    ck_assert_mem_eq(b.data, v1, sizeof v1);
    dg_buf_free(&b);
    /* v2: two more strings, "" as one NUL unit (never length 0) */
    ck_assert_int_eq(dg_reply_process_info(&b, 2, &f), 0);
    ck_assert_uint_eq(b.size, sizeof v1 + 12);
    ck_assert_uint_eq(b.data[14], sizeof v1 + 12);
    const uint8_t empty[] = {1, 0, 0, 0, 0, 0};
    ck_assert_mem_eq(b.data + sizeof v1, empty, 6);
    ck_assert_mem_eq(b.data + sizeof v1 + 6, empty, 6);
    dg_buf_free(&b);
    /* v3: uint32 version 1 first, then v2's fields, then the RID */
    ck_assert_int_eq(dg_reply_process_info(&b, 3, &f), 0);
    ck_assert_uint_eq(b.size, sizeof v1 + 4 + 18);
    const uint8_t ver[] = {1, 0, 0, 0, 0x34, 0x12};
    ck_assert_mem_eq(b.data + 20, ver, 6);
    dg_buf_free(&b);
}
END_TEST

START_TEST(environment_reply) {
    char *env[] = {"A=1", "BC=x", NULL};
    dg_buf head = {0}, body = {0};
    ck_assert_int_eq(dg_reply_environment(&head, &body, env), 0);
    const uint8_t h[] = {MAGIC, 0x1a, 0x00, 0xff, 0x00, 0x00, 0x00, 0x1e, 0, 0, 0, 0, 0};
    ck_assert_uint_eq(head.size, sizeof h);
    ck_assert_mem_eq(head.data, h, sizeof h);
    const uint8_t bd[] = {2, 0, 0, 0, 4, 0, 0, 0, 'A', 0, '=', 0, '1', 0, 0, 0,
                          5, 0, 0, 0, 'B', 0, 'C', 0, '=', 0, 'x', 0, 0, 0};
    ck_assert_uint_eq(body.size, sizeof bd); /* 0x1e = 30 */
    ck_assert_mem_eq(body.data, bd, sizeof bd);
    dg_buf_free(&head);
    dg_buf_free(&body);
}
END_TEST

START_TEST(diagnostic_ports) {
    dg_port_spec p[4];
    size_t n = 0;
    char err[200];
    ck_assert_int_eq(dg_parse_ports("/tmp/a.sock,connect,suspend;127.0.0.1:9000,listen;[::1]:5,NoSuspend;;", p, 4,
                                    &n, err, sizeof err),
                     0);
    ck_assert_uint_eq(n, 3);
    ck_assert_str_eq(p[0].address, "/tmp/a.sock");
    ck_assert_int_eq(p[0].connect, 1);
    ck_assert_int_eq(p[0].suspend, 1);
    ck_assert_int_eq(p[0].tcp, 0);
    ck_assert_int_eq(p[1].connect, 0);
    ck_assert_int_eq(p[1].tcp, 1);
    ck_assert_str_eq(p[1].host, "127.0.0.1");
    ck_assert_str_eq(p[1].port, "9000");
    ck_assert_int_eq(p[2].connect, 1); /* connect is the default */
    ck_assert_int_eq(p[2].suspend, 0);
    ck_assert_str_eq(p[2].host, "::1");
    ck_assert_int_eq(dg_parse_ports("x,listen,sometimes", p, 4, &n, err, sizeof err), -1);
    ck_assert_str_eq(err, "MANTRA_DiagnosticPorts:10: unknown tag \"sometimes\" (listen, connect, suspend, nosuspend)");
    ck_assert_int_eq(dg_parse_ports(",listen", p, 4, &n, err, sizeof err), -1);
    ck_assert_str_eq(err, "MANTRA_DiagnosticPorts:1: an entry needs an address before its tags");
    ck_assert_int_eq(dg_parse_ports("a;b;c;d;e", p, 4, &n, err, sizeof err), -6);
    ck_assert_str_eq(err, "MANTRA_DiagnosticPorts:9: more than 4 ports");
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("diag_ipc");
    TCase *t = tcase_create("ipc");
    tcase_add_test(t, header_of_the_example);
    tcase_add_test(t, header_errors);
    tcase_add_test(t, collect2_example);
    tcase_add_test(t, collect_versions);
    tcase_add_test(t, counters_filter_round_trip);
    tcase_add_test(t, collect_refusals);
    tcase_add_test(t, stop_payload);
    tcase_add_test(t, fixed_replies);
    tcase_add_test(t, process_info_replies);
    tcase_add_test(t, environment_reply);
    tcase_add_test(t, diagnostic_ports);
    suite_add_tcase(s, t);
    return s;
}

MANTRA_CHECK_MAIN(suite)
