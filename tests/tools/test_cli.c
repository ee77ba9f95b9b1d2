/* mantra dump / mantra stats: the contracts of DESIGN.md ("CLI contracts") and docs/dump-json.md. */
#define _POSIX_C_SOURCE 200809L

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gen/run_tool.h"

#define PV "microsoft-perfview/"
#define CHECKPOINTS PV "eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace"
#define NETPERF PV "eventpipe-dotnetcore2.1-linux-x64-tracelogging.netperf"
#define TRUNCATED "dotnet-diagnostics/trace.nettrace"
#define V6HDR "synthetic-v6/te-test-ParseV6CompressedEventHeaders.nettrace"

static const char *tool(void) { return run_tool_env("MANTRA_TOOL", "build/tools/mantra"); }

/* Fixture path, or NULL after a SKIP line (a failure with MANTRA_REQUIRE_INTEROP=1). */
static char *fixture(const char *rel) {
    char *dir = run_tool_path(run_tool_env("MANTRA_SHARED_DIR", "../shared"), "fixtures/nettrace");
    char *p = run_tool_path(dir, rel);
    free(dir);
    if (access(p, R_OK) == 0)
        return p;
    const char *req = getenv("MANTRA_REQUIRE_INTEROP");
    printf("SKIP: fixture %s not found\n", p);
    fflush(stdout);
    ck_assert_msg(!(req && strcmp(req, "1") == 0), "fixture %s is required (MANTRA_REQUIRE_INTEROP=1)", p);
    free(p);
    return NULL;
}

static void run(run_tool_result *r, const char *a1, const char *a2, const char *a3, const char *a4) {
    const char *argv[6] = {tool(), a1, a2, a3, a4, NULL};
    ck_assert_int_eq(run_tool(argv, NULL, r), 0);
}

START_TEST(help_and_version) {
    static const char *const cmds[][2] = {{"--help", NULL}, {"dump", "--help"}, {"stats", "--help"}};
    for (size_t i = 0; i < 3; i++) {
        run_tool_result r;
        run(&r, cmds[i][0], cmds[i][1], NULL, NULL);
        ck_assert_int_eq(r.status, 0);
        ck_assert_msg(strncmp(r.out, "Usage: mantra", 13) == 0, "%s", r.out);
        ck_assert_str_eq(r.err, "");
        run_tool_free(&r);
    }
    static const char *const vers[][2] = {{"--version", NULL}, {"dump", "--version"}, {"stats", "--version"}};
    for (size_t i = 0; i < 3; i++) {
        run_tool_result r;
        run(&r, vers[i][0], vers[i][1], NULL, NULL);
        ck_assert_int_eq(r.status, 0);
        ck_assert_msg(strncmp(r.out, "mantra ", 7) == 0 && r.out[r.out_len - 1] == '\n', "%s", r.out);
        run_tool_free(&r);
    }
}
END_TEST

START_TEST(usage_errors) {
    run_tool_result r;
    run(&r, NULL, NULL, NULL, NULL);
    ck_assert_int_eq(r.status, 2);
    run_tool_free(&r);
    run(&r, "frobnicate", NULL, NULL, NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_str_eq(r.err, "mantra: unknown command 'frobnicate'\nTry 'mantra --help'.\n");
    run_tool_free(&r);
    run(&r, "dump", NULL, NULL, NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_str_eq(r.err, "mantra dump: no trace given\nTry 'mantra dump --help'.\n");
    run_tool_free(&r);
    run(&r, "dump", "--xml", "x", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_str_eq(r.err, "mantra dump: unknown option '--xml'\nTry 'mantra dump --help'.\n");
    run_tool_free(&r);
    run(&r, "stats", "--json", "a", "b");
    ck_assert_int_eq(r.status, 2);
    ck_assert_str_eq(r.err, "mantra stats: more than one trace given ('b')\nTry 'mantra stats --help'.\n");
    run_tool_free(&r);
}
END_TEST

START_TEST(missing_file) {
    run_tool_result r;
    run(&r, "dump", "--json", "/nonexistent/trace.nettrace", NULL);
    ck_assert_int_eq(r.status, 1);
    ck_assert_str_eq(r.out, "");
    ck_assert_str_eq(r.err, "mantra dump: /nonexistent/trace.nettrace: No such file or directory\n");
    run_tool_free(&r);
}
END_TEST

START_TEST(stats_json_exact) {
    char *p = fixture(CHECKPOINTS);
    if (p == NULL)
        return;
    run_tool_result r;
    run(&r, "stats", "--json", p, NULL);
    ck_assert_int_eq(r.status, 0);
    ck_assert_str_eq(r.out, "{\"format_version\":4,\"complete\":true,\"events\":3,\"metadata\":1,\"stacks\":1,"
                            "\"sequence_points\":1,\"dropped\":0,\"by_event\":{\"Microsoft-Windows-DotNETRuntimeRundown/"
                            "300/v0\":3},\"errors\":[]}\n");
    ck_assert_str_eq(r.err, "");
    run_tool_free(&r);
    free(p);

    p = fixture(V6HDR);
    if (p == NULL)
        return;
    run(&r, "stats", "--json", p, NULL);
    ck_assert_int_eq(r.status, 0);
    ck_assert_str_eq(r.out, "{\"format_version\":6,\"complete\":true,\"events\":7,\"metadata\":2,\"stacks\":0,"
                            "\"sequence_points\":0,\"dropped\":3,\"by_event\":{\"TestProvider/15/v0\":3,"
                            "\"TestProvider/16/v0\":4},\"errors\":[]}\n");
    run_tool_free(&r);
    free(p);
}
END_TEST

START_TEST(stats_truncated_and_netperf) {
    char *p = fixture(TRUNCATED);
    if (p == NULL)
        return;
    run_tool_result r;
    run(&r, "stats", "--json", p, NULL);
    ck_assert_int_eq(r.status, 0); /* every complete block was read */
    ck_assert_msg(strncmp(r.out, "{\"format_version\":4,\"complete\":false,\"events\":19842,\"metadata\":27,", 66) == 0,
                  "%s", r.out);
    const char *msg = "offset 4170673: EventBlock truncated: it declares 5488 content bytes ending at offset 4176192, "
                      "the input ends at offset 4174144 (incomplete trace)";
    char want[512];
    snprintf(want, sizeof want, "\"errors\":[\"%s\"]}\n", msg);
    ck_assert_msg(strstr(r.out, want) != NULL, "%s", r.out);
    snprintf(want, sizeof want, "mantra stats: %s: %s\n", p, msg);
    ck_assert_str_eq(r.err, want);
    run_tool_free(&r);
    free(p);

    p = fixture(NETPERF);
    if (p == NULL)
        return;
    run(&r, "stats", "--json", p, NULL);
    ck_assert_int_eq(r.status, 1);
    msg = "offset 0: NetPerf format (version 3, no \\\"Nettrace\\\" magic) is not supported: mantra reads nettrace V4, "
          "V5 and V6 traces (.NET Core 3.0 and later)";
    snprintf(want, sizeof want,
             "{\"format_version\":3,\"complete\":false,\"events\":0,\"metadata\":0,\"stacks\":0,\"sequence_points\":0,"
             "\"dropped\":0,\"by_event\":{},\"errors\":[\"%s\"]}\n", msg);
    ck_assert_str_eq(r.out, want);
    run_tool_free(&r);
    run(&r, "dump", p, NULL, NULL);
    ck_assert_int_eq(r.status, 1);
    snprintf(want, sizeof want,
             "mantra dump: %s: offset 0: NetPerf format (version 3, no \"Nettrace\" magic) is not supported: mantra "
             "reads nettrace V4, V5 and V6 traces (.NET Core 3.0 and later)\n", p);
    ck_assert_str_eq(r.err, want);
    run_tool_free(&r);
    free(p);
}
END_TEST

START_TEST(dump_json_exact) {
    char *p = fixture(CHECKPOINTS);
    if (p == NULL)
        return;
    run_tool_result r;
    run(&r, "dump", "--json", p, NULL);
    ck_assert_int_eq(r.status, 0);
    /* Field lists: the runtime wrote minimal metadata for ExecutionCheckpoint (no fields) and the
     * project's manifest does not describe event 300, so "fields" is {} (contract: "{} when the
     * metadata describes no fields"). */
    ck_assert_str_eq(r.out,
                     "{\"timestamp\":11111943296237,\"provider\":\"Microsoft-Windows-DotNETRuntimeRundown\","
                     "\"event_id\":300,\"version\":0,\"name\":\"\",\"thread_id\":25112,\"sequence\":1,\"fields\":{},"
                     "\"stack\":[]}\n"
                     "{\"timestamp\":11111943296409,\"provider\":\"Microsoft-Windows-DotNETRuntimeRundown\","
                     "\"event_id\":300,\"version\":0,\"name\":\"\",\"thread_id\":25112,\"sequence\":2,\"fields\":{},"
                     "\"stack\":[]}\n"
                     "{\"timestamp\":11111943296514,\"provider\":\"Microsoft-Windows-DotNETRuntimeRundown\","
                     "\"event_id\":300,\"version\":0,\"name\":\"\",\"thread_id\":25112,\"sequence\":3,\"fields\":{},"
                     "\"stack\":[]}\n");
    ck_assert_str_eq(r.err, "");
    run_tool_free(&r);
    free(p);
}
END_TEST

START_TEST(dump_sorted_v6) {
    char *p = fixture(V6HDR);
    if (p == NULL)
        return;
    run_tool_result r;
    run(&r, "dump", "--json", "--sorted", p);
    ck_assert_int_eq(r.status, 0);
    /* expected.json dispatch order: 10000 10500 11123 15000 17000 20000 22000, threads 12 13 13 12 13 14 12 */
    static const char *const ts[] = {"10000", "10500", "11123", "15000", "17000", "20000", "22000"};
    static const char *const tid[] = {"12", "13", "13", "12", "13", "14", "12"};
    char *line = r.out;
    for (int i = 0; i < 7; i++) {
        char want[160];
        snprintf(want, sizeof want, "{\"timestamp\":%s,\"provider\":\"TestProvider\",", ts[i]);
        ck_assert_msg(strncmp(line, want, strlen(want)) == 0, "line %d: %s", i, line);
        snprintf(want, sizeof want, "\"thread_id\":%s,", tid[i]);
        char *nl = strchr(line, '\n');
        ck_assert_ptr_nonnull(nl);
        *nl = '\0';
        ck_assert_msg(strstr(line, want) != NULL, "line %d: %s", i, line);
        ck_assert_msg(strstr(line, "\"fields\":{},\"stack\":[]}") != NULL, "line %d: %s", i, line);
        line = nl + 1;
    }
    ck_assert_str_eq(line, "");
    run_tool_free(&r);
    free(p);
}
END_TEST

int main(void) {
    Suite *s = suite_create("cli");
    TCase *tc = tcase_create("cli");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, help_and_version);
    tcase_add_test(tc, usage_errors);
    tcase_add_test(tc, missing_file);
    tcase_add_test(tc, stats_json_exact);
    tcase_add_test(tc, stats_truncated_and_netperf);
    tcase_add_test(tc, dump_json_exact);
    tcase_add_test(tc, dump_sorted_v6);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
