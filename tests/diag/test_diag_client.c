/* The diagnostics client (runtime/src/diag: ipc_request.c, ipc_parse.c, client.c, endpoints.c;
 * mantra/diag_client.h): the request bytes of each CollectTracing version and of ProcessInfo's
 * replies without sockets, then the client against this process's own server in a fresh $TMPDIR
 * (endpoint listing with a stale socket file, ProcessInfo, a tracing session whose events are
 * counted exactly, StopTracing), a reverse target that the server connects to, and the errors of
 * bad targets: a process that is gone, a live one
 * without an endpoint, a socket nobody listens on, a TCP port nobody listens on, a malformed
 * address. Each test forks (check's default). */
#define _GNU_SOURCE
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_main.h"
#include "diag/ipc-internal.h"
#include "dotnet_registry.h"
#include "dotnet_writers.h"
#include "mantra/diag.h"
#include "mantra/diag_client.h"
#include "mantra/reader.h"
#include "mantra/session.h"

#define MAGIC 0x44, 0x4f, 0x54, 0x4e, 0x45, 0x54, 0x5f, 0x49, 0x50, 0x43, 0x5f, 0x56, 0x31, 0x00

static mantra_provider_spec demo_spec(uint64_t keywords, uint32_t level, const char *args) {
    mantra_provider_spec s;
    memset(&s, 0, sizeof s);
    snprintf(s.name, sizeof s.name, "Mantra-Demo");
    s.keywords = keywords;
    s.level = level;
    snprintf(s.args, sizeof s.args, "%s", args);
    return s;
}

/* CollectTracing2 as dotnet-trace 10 writes it (recorded: tests/interop/profiles_compare.py):
 * buffer, format 1, requestRundown, providers (keywords, level, name, arguments; no arguments are
 * "", one NUL unit). */
START_TEST(collect_request_versions) {
    mantra_provider_spec p = demo_spec(1, 5, "");
    mantra_diag_collect_request req = {&p, 1, 16, 0, 1};
    dg_buf b = {0};
    ck_assert_int_eq(dg_request_collect(&b, &req), 0);
    static const uint8_t v2[] = {
        MAGIC, 0x4f, 0x00, 0x02, 0x03, 0x00, 0x00,
        0x10, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
        0x01, 0x00, 0x00, 0x00,
        0x01, 0, 0, 0, 0, 0, 0, 0, 0x05, 0x00, 0x00, 0x00,
        0x0c, 0x00, 0x00, 0x00, 'M', 0, 'a', 0, 'n', 0, 't', 0, 'r', 0, 'a', 0, '-', 0, 'D', 0, 'e', 0, 'm', 0, 'o', 0, 0, 0,
        0x01, 0x00, 0x00, 0x00, 0x00, 0x00};
    ck_assert_uint_eq(b.size, sizeof v2);
    ck_assert_mem_eq(b.data, v2, sizeof v2);
    dg_buf_free(&b);

    /* the default rundown: requestRundown 1 */
    req.rundown_keywords = MANTRA_DIAG_RUNDOWN_DEFAULT;
    memset(&b, 0, sizeof b);
    ck_assert_int_eq(dg_request_collect(&b, &req), 0);
    ck_assert_uint_eq(b.data[17], 0x03);
    ck_assert_uint_eq(b.data[28], 0x01);
    dg_buf_free(&b);

    /* no stacks: CollectTracing3, requestStackwalk 0 after requestRundown */
    req.stackwalk = 0;
    memset(&b, 0, sizeof b);
    ck_assert_int_eq(dg_request_collect(&b, &req), 0);
    ck_assert_uint_eq(b.size, sizeof v2 + 1);
    ck_assert_uint_eq(b.data[17], 0x04);
    ck_assert_uint_eq(b.data[28], 0x01);
    ck_assert_uint_eq(b.data[29], 0x00);
    dg_buf_free(&b);

    /* rundown keyword 1 (gc-collect): CollectTracing4, u64 keywords then requestStackwalk, and
     * arguments as a string */
    req.stackwalk = 1;
    req.rundown_keywords = 1;
    p = demo_spec(1, 5, "A=1");
    memset(&b, 0, sizeof b);
    ck_assert_int_eq(dg_request_collect(&b, &req), 0);
    ck_assert_uint_eq(b.size, sizeof v2 + 8 + 6);
    ck_assert_uint_eq(b.data[17], 0x05);
    static const uint8_t v4_head[] = {0x10, 0, 0, 0, 0x01, 0, 0, 0, 0x01, 0, 0, 0, 0, 0, 0, 0, 0x01};
    ck_assert_mem_eq(b.data + 20, v4_head, sizeof v4_head);
    static const uint8_t args[] = {0x04, 0, 0, 0, 'A', 0, '=', 0, '1', 0, 0, 0};
    ck_assert_mem_eq(b.data + b.size - sizeof args, args, sizeof args);
    dg_buf_free(&b);

    /* what the runtime refuses is not sent: level 6, no providers */
    p.level = 6;
    memset(&b, 0, sizeof b);
    ck_assert_int_eq(dg_request_collect(&b, &req), -2);
    dg_buf_free(&b);
    req.count = 0;
    ck_assert_int_eq(dg_request_collect(&b, &req), -2);
    dg_buf_free(&b);

    /* StopTracing(0x0102030405060708) */
    memset(&b, 0, sizeof b);
    ck_assert_int_eq(dg_request_stop(&b, UINT64_C(0x0102030405060708)), 0);
    static const uint8_t stop[] = {MAGIC, 0x1c, 0x00, 0x02, 0x01, 0x00, 0x00, 8, 7, 6, 5, 4, 3, 2, 1};
    ck_assert_uint_eq(b.size, sizeof stop);
    ck_assert_mem_eq(b.data, stop, sizeof stop);
    dg_buf_free(&b);
}
END_TEST

START_TEST(replies) {
    /* ProcessInfo2: pid 42, a cookie, "a b", "Linux", "x64", "App", "10.0.0" */
    static const uint8_t info2[] = {
        42, 0, 0, 0, 0, 0, 0, 0,
        1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
        4, 0, 0, 0, 'a', 0, ' ', 0, 'b', 0, 0, 0,
        6, 0, 0, 0, 'L', 0, 'i', 0, 'n', 0, 'u', 0, 'x', 0, 0, 0,
        4, 0, 0, 0, 'x', 0, '6', 0, '4', 0, 0, 0,
        4, 0, 0, 0, 'A', 0, 'p', 0, 'p', 0, 0, 0,
        7, 0, 0, 0, '1', 0, '0', 0, '.', 0, '0', 0, '.', 0, '0', 0, 0, 0};
    mantra_diag_process_info info;
    ck_assert_int_eq(dg_parse_process_info(2, info2, sizeof info2, &info), 0);
    ck_assert_uint_eq(info.pid, 42);
    ck_assert_uint_eq(info.cookie[15], 16);
    ck_assert_str_eq(info.command_line, "a b");
    ck_assert_str_eq(info.os, "Linux");
    ck_assert_str_eq(info.arch, "x64");
    ck_assert_str_eq(info.entrypoint, "App");
    ck_assert_str_eq(info.runtime_version, "10.0.0");
    ck_assert_ptr_null(info.rid);
    mantra_diag_process_info_free(&info);
    /* read as ProcessInfo (1): the same start; one byte short of the last string: refused */
    ck_assert_int_eq(dg_parse_process_info(1, info2, sizeof info2, &info), 0);
    ck_assert_str_eq(info.arch, "x64");
    mantra_diag_process_info_free(&info);
    ck_assert_int_eq(dg_parse_process_info(2, info2, sizeof info2 - 1, &info), -1);
    ck_assert_ptr_null(info.command_line);

    /* an error reply: UNKNOWN_COMMAND, named */
    dg_header h = {24, DG_SET_SERVER, DG_SERVER_ERROR, 0};
    const uint8_t hr[] = {0x85, 0x13, 0x13, 0x80};
    uint32_t got = 0;
    ck_assert_int_eq(dg_parse_reply(&h, hr, 4, &got), 1);
    ck_assert_uint_eq(got, 0x80131385u);
    ck_assert_str_eq(mantra_diag_hresult_name(got), "UNKNOWN_COMMAND");
    ck_assert_str_eq(mantra_diag_hresult_name(0x80131384u), "BAD_ENCODING");
    ck_assert_ptr_null(mantra_diag_hresult_name(0x12345678u));
    ck_assert_int_eq(dg_parse_reply(&h, hr, 3, &got), -1); /* the HRESULT cut short */
    h.set = DG_SET_EVENTPIPE;
    ck_assert_int_eq(dg_parse_reply(&h, hr, 4, &got), -1); /* not a server reply */
}
END_TEST

static char g_dir[64];

static void start_server(void) {
    snprintf(g_dir, sizeof g_dir, "/tmp/mantra-client-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(g_dir));
    setenv("TMPDIR", g_dir, 1);
    unsetenv("MANTRA_DiagnosticPorts");
    unsetenv("MANTRA_DefaultDiagnosticPortSuspend");
    ck_assert_int_eq(mantra_diag_start(), 0);
}

/* ps's listing: this process, and a socket file of a process that is gone, skipped and counted. */
START_TEST(list_and_process_info) {
    start_server();
    char stale[128];
    snprintf(stale, sizeof stale, "%s/dotnet-diagnostic-2147483000-1-socket", g_dir);
    FILE *f = fopen(stale, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    char other[128]; /* not the pattern: ignored */
    snprintf(other, sizeof other, "%s/dotnet-diagnostic-12x-1-socket", g_dir);
    f = fopen(other, "w");
    fclose(f);
    mantra_diag_endpoint *eps = NULL;
    size_t count = 9, gone = 9;
    char err[256];
    ck_assert_int_eq(mantra_diag_list(&eps, &count, &gone, err, sizeof err), 0);
    ck_assert_uint_eq(count, 1);
    ck_assert_uint_eq(gone, 1);
    ck_assert_uint_eq(eps[0].pid, (uint64_t)getpid());
    ck_assert_str_eq(eps[0].path, mantra_diag_socket_path());
    free(eps);
    char path[256];
    ck_assert_int_eq(mantra_diag_endpoint_of((uint64_t)getpid(), path, sizeof path, err, sizeof err), 0);
    ck_assert_str_eq(path, mantra_diag_socket_path());

    mantra_diag_target *t;
    ck_assert_int_eq(mantra_diag_target_connect(path, &t, err, sizeof err), 0);
    mantra_diag_process_info info;
    uint32_t hr = 1;
    ck_assert_int_eq(mantra_diag_process_info_get(t, 2000, &info, &hr, err, sizeof err), 0);
    ck_assert_int_eq(info.version, 3);
    ck_assert_uint_eq(info.pid, (uint64_t)getpid());
    ck_assert_str_eq(info.os, "Linux");
    ck_assert_uint_gt(strlen(info.command_line), 0);
    mantra_diag_process_info_free(&info);
    ck_assert_int_eq(mantra_diag_resume(t, 2000, &hr, err, sizeof err), 0);
    mantra_diag_target_free(t);

    /* the gone process by pid: "no such process"; a live process without an endpoint */
    ck_assert_int_eq(mantra_diag_endpoint_of(2147483000u, path, sizeof path, err, sizeof err), MANTRA_ENOENT);
    ck_assert_msg(strstr(err, "no such process: 2147483000") != NULL, "%s", err);
    ck_assert_int_eq(mantra_diag_endpoint_of((uint64_t)getppid(), path, sizeof path, err, sizeof err), MANTRA_ENOENT);
    ck_assert_msg(strstr(err, "has no diagnostics endpoint") != NULL, "%s", err);
    mantra_diag_stop();
    unlink(stale);
    unlink(other);
    rmdir(g_dir);
}
END_TEST

/* A session through the client: 250 Tick events written, exactly 250 in the stream, which ends
 * with the end tag after StopTracing. */
START_TEST(collect_counts_events) {
    ck_assert_int_eq(mantra_dotnet_register(), 0);
    start_server();
    mantra_provider_spec p = demo_spec(1, 5, "");
    mantra_diag_collect_request req = {&p, 1, 16, 0, 1};
    mantra_diag_session *s = NULL;
    uint32_t hr = 0;
    char err[256];
    mantra_diag_target *path;
    ck_assert_int_eq(mantra_diag_target_connect(mantra_diag_socket_path(), &path, err, sizeof err), 0);
    ck_assert_int_eq(mantra_diag_collect_start(path, &req, 2000, &s, &hr, err, sizeof err), 0);
    uint64_t id = mantra_diag_session_id(s);
    ck_assert_int_ge(mantra_session_bit(id), 0);
    for (uint64_t i = 0; i < 250; i++)
        ck_assert_int_eq(mantra_Demo_Tick_write(3, i), 0);
    ck_assert_int_eq(mantra_diag_stop_tracing(path, id, 5000, &hr, err, sizeof err), 0);
    static uint8_t trace[1 << 20];
    size_t n = 0;
    for (;;) {
        int64_t k = mantra_diag_session_read(s, trace + n, sizeof trace - n, 5000, err, sizeof err);
        ck_assert_msg(k >= 0, "%s", err);
        if (k == 0)
            break;
        n += (size_t)k;
    }
    mantra_diag_session_close(s);
    ck_assert_uint_eq(trace[n - 1], 0x01);
    mantra_reader *rd = mantra_reader_new(NULL);
    ck_assert_int_eq(mantra_reader_open_memory(rd, trace, n), 0);
    const mantra_trace_event *ev;
    uint64_t ticks = 0;
    int rc;
    while ((rc = mantra_reader_next(rd, &ev)) == 1)
        ticks += strcmp(ev->metadata->provider, "Mantra-Demo") == 0 && ev->metadata->event_id == 1;
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(mantra_reader_complete(rd), 1);
    ck_assert_uint_eq(ticks, 250);
    mantra_reader_free(rd);
    /* a second session stopped without waiting: the answer is taken while the stream is read */
    p.keywords = 1;
    ck_assert_int_eq(mantra_diag_collect_start(path, &req, 2000, &s, &hr, err, sizeof err), 0);
    for (uint64_t i = 0; i < 10; i++)
        ck_assert_int_eq(mantra_Demo_Tick_write(4, i), 0);
    ck_assert_int_eq(mantra_diag_session_stop_state(s, &hr), 1);
    ck_assert_int_eq(mantra_diag_session_request_stop(s, path, 2000, err, sizeof err), 0);
    ck_assert_int_eq(mantra_diag_session_request_stop(s, path, 2000, err, sizeof err), MANTRA_ESTATE);
    n = 0;
    for (;;) {
        int64_t k = mantra_diag_session_read(s, trace + n, sizeof trace - n, 5000, err, sizeof err);
        ck_assert_msg(k >= 0, "%s", err);
        if (k == 0)
            break;
        n += (size_t)k;
    }
    ck_assert_uint_eq(trace[n - 1], 0x01);
    /* the read that saw the end of the stream waited for the answer, which may come after it */
    ck_assert_int_eq(mantra_diag_session_stop_state(s, &hr), 0);
    mantra_diag_session_close(s);
    /* a session id the process does not know: OK, nothing to stop (as the runtime) */
    ck_assert_int_eq(mantra_diag_stop_tracing(path, id + 1000, 2000, &hr, err, sizeof err), 0);
    /* a provider level the runtime refuses is not sent */
    p.level = 6;
    ck_assert_int_eq(mantra_diag_collect_start(path, &req, 2000, &s, &hr, err, sizeof err), MANTRA_EINVAL);
    ck_assert_ptr_null(s);
    mantra_diag_target_free(path);
    mantra_diag_stop();
    rmdir(g_dir);
}
END_TEST

/* Reverse connect: this process's server connects to a target that listens (MANTRA_DiagnosticPorts
 * ADDRESS,connect), advertises itself on each connection, and takes one command per connection:
 * ProcessInfo, then a session and its stop, each on a connection of its own. */
START_TEST(reverse_target) {
    ck_assert_int_eq(mantra_dotnet_register(), 0);
    char dir[64] = "/tmp/mantra-client-XXXXXX", sock[128], err[256];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(sock, sizeof sock, "%s/tool.sock", dir);
    mantra_diag_target *t;
    ck_assert_int_eq(mantra_diag_target_listen(sock, &t, err, sizeof err), 0);
    mantra_diag_target *again; /* the file exists now: refused */
    ck_assert_int_eq(mantra_diag_target_listen(sock, &again, err, sizeof err), MANTRA_EIO);
    ck_assert_msg(strstr(err, "cannot listen on ") != NULL, "%s", err);
    uint64_t pid = 0;
    ck_assert_int_eq(mantra_diag_target_wait(t, 200, &pid, err, sizeof err), MANTRA_ETIMEDOUT);
    char ports[160];
    snprintf(ports, sizeof ports, "%s,connect,nosuspend", sock);
    setenv("TMPDIR", dir, 1);
    setenv("MANTRA_DiagnosticPorts", ports, 1);
    ck_assert_int_eq(mantra_diag_start(), 0);
    ck_assert_int_eq(mantra_diag_target_wait(t, 5000, &pid, err, sizeof err), 0);
    ck_assert_uint_eq(pid, (uint64_t)getpid());
    mantra_diag_process_info info;
    uint32_t hr = 0;
    ck_assert_int_eq(mantra_diag_process_info_get(t, 5000, &info, &hr, err, sizeof err), 0);
    ck_assert_uint_eq(info.pid, (uint64_t)getpid());
    mantra_diag_process_info_free(&info);
    mantra_provider_spec p = demo_spec(1, 5, "");
    mantra_diag_collect_request req = {&p, 1, 16, 0, 1};
    mantra_diag_session *s;
    ck_assert_int_eq(mantra_diag_collect_start(t, &req, 5000, &s, &hr, err, sizeof err), 0);
    for (uint64_t i = 0; i < 40; i++)
        ck_assert_int_eq(mantra_Demo_Tick_write(5, i), 0);
    ck_assert_int_eq(mantra_diag_session_request_stop(s, t, 5000, err, sizeof err), 0);
    static uint8_t trace[1 << 18];
    size_t n = 0;
    for (int64_t k; (k = mantra_diag_session_read(s, trace + n, sizeof trace - n, 5000, err, sizeof err)) != 0;) {
        ck_assert_msg(k > 0, "%s", err);
        n += (size_t)k;
    }
    ck_assert_int_eq(mantra_diag_session_stop_state(s, &hr), 0);
    mantra_diag_session_close(s);
    mantra_reader *rd = mantra_reader_new(NULL);
    ck_assert_int_eq(mantra_reader_open_memory(rd, trace, n), 0);
    const mantra_trace_event *ev;
    uint64_t ticks = 0;
    while (mantra_reader_next(rd, &ev) == 1)
        ticks += strcmp(ev->metadata->provider, "Mantra-Demo") == 0 && ev->metadata->event_id == 1;
    ck_assert_int_eq(mantra_reader_complete(rd), 1);
    ck_assert_uint_eq(ticks, 40);
    mantra_reader_free(rd);
    mantra_diag_stop();
    mantra_diag_target_free(t);
    struct stat st;
    ck_assert_int_ne(stat(sock, &st), 0); /* the socket file it made is gone */
    rmdir(dir);
}
END_TEST

START_TEST(unreachable_endpoints) {
    char dir[64] = "/tmp/mantra-client-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[128], err[256];
    snprintf(path, sizeof path, "%s/nobody-socket", dir);
    mantra_diag_process_info info;
    uint32_t hr = 0;
    mantra_diag_target *t;
    ck_assert_int_eq(mantra_diag_target_connect(path, &t, err, sizeof err), 0);
    ck_assert_int_eq(mantra_diag_process_info_get(t, 500, &info, &hr, err, sizeof err), MANTRA_EIO);
    ck_assert_msg(strstr(err, "cannot connect to ") != NULL, "%s", err);
    mantra_diag_target_free(t);
    /* TCP port 1 on the loopback: nobody listens there */
    ck_assert_int_eq(mantra_diag_target_connect("127.0.0.1:1", &t, err, sizeof err), 0);
    ck_assert_int_eq(mantra_diag_process_info_get(t, 500, &info, &hr, err, sizeof err), MANTRA_EIO);
    ck_assert_msg(strstr(err, "cannot connect to 127.0.0.1:1") != NULL, "%s", err);
    mantra_diag_target_free(t);
    ck_assert_int_eq(mantra_diag_target_connect("", &t, err, sizeof err), MANTRA_EINVAL);
    ck_assert_ptr_null(t);
    ck_assert_int_eq(mantra_diag_target_connect("a;b", &t, err, sizeof err), MANTRA_EINVAL);
    rmdir(dir);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("diag_client");
    TCase *t = tcase_create("client");
    tcase_set_timeout(t, 30);
    tcase_add_test(t, collect_request_versions);
    tcase_add_test(t, replies);
    tcase_add_test(t, list_and_process_info);
    tcase_add_test(t, collect_counts_events);
    tcase_add_test(t, unreachable_endpoints);
    tcase_add_test(t, reverse_target);
    suite_add_tcase(s, t);
    return s;
}

MANTRA_CHECK_MAIN(suite)
