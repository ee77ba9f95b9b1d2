/* mantra dump / mantra stats: the contracts of docs/cli.md (section "mantra") and docs/dump-json.md. */
#define _POSIX_C_SOURCE 200809L

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
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

/* The first line of a file ("" when it cannot be read), without its newline. */
static void first_line(const char *path, char *out, size_t size) {
    out[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    if (!fgets(out, (int)size, f))
        out[0] = 0;
    out[strcspn(out, "\n")] = 0;
    fclose(f);
}

static int cpu_flags_have(const char *a, const char *b) {
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return 0;
    char line[8192];
    int has = 0;
    while (!has && fgets(line, sizeof line, f))
        has = strstr(line, a) != NULL && strstr(line, b) != NULL;
    fclose(f);
    return has;
}

/* `mantra stats --clock`: the clock that MANTRA_CLOCK picks here, the kernel's clocksource and the
 * CPU flags as the machine says them, a cost per read, and no trace. */
START_TEST(stats_clock) {
    char cs[64], want[512];
    first_line("/sys/devices/system/clocksource/clocksource0/current_clocksource", cs, sizeof cs);
    int inv = 0;
#if defined(__x86_64__)
    inv = cpu_flags_have(" constant_tsc", " nonstop_tsc");
#endif
    run_tool_result r;
    setenv("MANTRA_CLOCK", "monotonic", 1);
    run(&r, "stats", "--clock", "--json", NULL);
    ck_assert_int_eq(r.status, 0);
    ck_assert_str_eq(r.err, "");
    snprintf(want, sizeof want,
             "{\"clock\":\"monotonic\",\"mantra_clock\":\"monotonic\",\"kernel_clocksource\":\"%s\","
             "\"invariant_tsc\":%s,\"ns_per_read\":{\"monotonic\":",
             cs, inv ? "true" : "false");
    ck_assert_msg(strncmp(r.out, want, strlen(want)) == 0, "%s", r.out);
    ck_assert_double_gt(atof(r.out + strlen(want)), 0.0);
    /* the ordered read the clock uses, which is also the one timed: RDTSCP only where the CPU says
     * it has it (a guest may hide it; RDTSCP there would be an invalid instruction) */
    int rdtscp = 0;
#if defined(__x86_64__)
    rdtscp = cpu_flags_have(" rdtscp", " rdtscp");
#endif
    snprintf(want, sizeof want, ",\"tsc_ordered_read\":\"%s\",", !inv ? "" : rdtscp ? "rdtscp" : "lfence+rdtsc");
    ck_assert_msg(strstr(r.out, want) != NULL, "%s not in %s", want, r.out);
    run_tool_free(&r);
    setenv("MANTRA_CLOCK", "tsc-unordered", 1);
    run(&r, "stats", "--clock", NULL, NULL);
    ck_assert_int_eq(r.status, 0);
    snprintf(want, sizeof want, "clock: %s (this environment's processes stamp their events with it; MANTRA_CLOCK=tsc-unordered)\n"
             "kernel clocksource: %s\ninvariant TSC (constant_tsc, nonstop_tsc): %s\n",
             inv ? "tsc-unordered" : "monotonic", cs[0] ? cs : "unknown", inv ? "yes" : "no");
    ck_assert_msg(strncmp(r.out, want, strlen(want)) == 0, "%s", r.out);
    run_tool_free(&r);
    unsetenv("MANTRA_CLOCK");
    run(&r, "stats", "--clock", "x.nettrace", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_str_eq(r.err, "mantra stats: --clock reads no trace\nTry 'mantra stats --help'.\n");
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
    ck_assert_str_eq(r.out, "{\"format_version\":4,\"complete\":true,\"pointer_size\":8,\"events\":3,\"metadata\":1,\"stacks\":1,"
                            "\"sequence_points\":1,\"dropped\":0,\"manifest_events\":3,\"decode_errors\":0,\"by_event\":{\"Microsoft-Windows-DotNETRuntimeRundown/"
                            "300/v0\":3},\"by_name\":{\"Microsoft-Windows-DotNETRuntimeRundown/ExecutionCheckpointDCEnd\":3},"
                            "\"errors\":[]}\n");
    ck_assert_str_eq(r.err, "");
    run_tool_free(&r);
    free(p);

    p = fixture(V6HDR);
    if (p == NULL)
        return;
    run(&r, "stats", "--json", p, NULL);
    ck_assert_int_eq(r.status, 0);
    ck_assert_str_eq(r.out, "{\"format_version\":6,\"complete\":true,\"pointer_size\":8,\"events\":7,\"metadata\":2,\"stacks\":0,"
                            "\"sequence_points\":0,\"dropped\":3,\"manifest_events\":0,\"decode_errors\":0,\"by_event\":{\"TestProvider/15/v0\":3,"
                            "\"TestProvider/16/v0\":4},\"by_name\":{\"TestProvider/TestEvent2\":4,\"TestProvider/TestEvent1\":3},"
                            "\"errors\":[]}\n");
    run_tool_free(&r);
    free(p);
}
END_TEST

/* `mantra stats` text: the counts, then the events by name, most first (TestEvent2 4 before
 * TestEvent1 3). */
START_TEST(stats_text_table_by_count) {
    char *p = fixture(V6HDR);
    if (p == NULL)
        return;
    run_tool_result r;
    run(&r, "stats", p, NULL, NULL);
    ck_assert_int_eq(r.status, 0);
    ck_assert_str_eq(r.out, "format version   6\ncomplete         yes\npointer size     8\nevents           7\n"
                            "metadata         2\nstacks           0\nsequence points  0\ndropped          3\n"
                            "manifest events  0\ndecode errors    0\n\n"
                            "     count  event                                    provider/id/version\n"
                            "         4  TestEvent2                               TestProvider/16/v0\n"
                            "         3  TestEvent1                               TestProvider/15/v0\n");
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
    ck_assert_msg(strncmp(r.out, "{\"format_version\":4,\"complete\":false,\"pointer_size\":8,\"events\":19842,\"metadata\":27,", 83) == 0,
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
             "{\"format_version\":3,\"complete\":false,\"pointer_size\":0,\"events\":0,\"metadata\":0,\"stacks\":0,\"sequence_points\":0,"
             "\"dropped\":0,\"manifest_events\":0,\"decode_errors\":0,\"by_event\":{},\"by_name\":{},\"errors\":[\"%s\"]}\n",
             msg);
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
    /* The runtime wrote minimal metadata for ExecutionCheckpointDCEnd (no name, no fields): the
     * built-in runtime providers (manifest/clr/runtime.yaml, no flag) name it, give its task and
     * opcode and decode its fields (the values TraceEvent shows). */
    static const char *const cp[] = {"RuntimeInit", "RuntimeSuspend", "RuntimeResumed"};
    static const char *const ts[] = {"11111943296237", "11111943296409", "11111943296514"};
    static const char *const cts[] = {"11111925598665", "11111925877436", "11111925880297"};
    char want[4096] = "";
    for (int i = 0; i < 3; i++) {
        char line[700];
        snprintf(line, sizeof line,
                 "{\"timestamp\":%s,\"provider\":\"Microsoft-Windows-DotNETRuntimeRundown\",\"event_id\":300,"
                 "\"version\":0,\"name\":\"ExecutionCheckpointDCEnd\",\"task\":\"ExecutionCheckpoint\","
                 "\"opcode\":\"ExecutionCheckpointDCEnd\",\"thread_id\":25112,\"sequence\":%d,\"fields\":{"
                 "\"ClrInstanceID\":9,\"Name\":\"%s\",\"Timestamp\":%s},\"field_source\":\"manifest\",\"maps\":{},"
                 "\"stack\":[],\"activity_id\":\"00000000-0000-0000-0000-000000000000\",\"related_activity_id\":\"00000000-0000-0000-0000-000000000000\"}\n",
                 ts[i], i + 1, cp[i], cts[i]);
        strcat(want, line);
    }
    ck_assert_str_eq(r.out, want);
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
        ck_assert_msg(strstr(line, "\"fields\":{},\"field_source\":\"none\",\"maps\":{},\"stack\":[],\"activity_id\":") != NULL,
                      "line %d: %s", i, line);
        line = nl + 1;
    }
    ck_assert_str_eq(line, "");
    run_tool_free(&r);
    free(p);
}
END_TEST

/* ---- --manifest and MANTRA_MANIFEST_PATH (tests/tools/manifests/) ---------------------------- */

static char *manifest_file(const char *name) {
    char *dir = run_tool_path(run_tool_env("MANTRA_SOURCE_DIR", "."), "tests/tools/manifests");
    char *p = run_tool_path(dir, name);
    free(dir);
    return p;
}

/* The three ExecutionCheckpoint events of the fixture, decoded with checkpoint.yaml (the values
 * TraceEvent shows for them); "fields" without Timestamp for checkpoint-trailing.yaml. */
static void want_checkpoints(const char *out, int with_timestamp, const char *decode_error) {
    static const char *const names[] = {"RuntimeInit", "RuntimeSuspend", "RuntimeResumed"};
    static const char *const ts[] = {"11111943296237", "11111943296409", "11111943296514"};
    static const char *const cts[] = {"11111925598665", "11111925877436", "11111925880297"};
    char want[4096] = "";
    for (int i = 0; i < 3; i++) {
        char line[700], stamp[64] = "", derr[64] = "";
        if (with_timestamp)
            snprintf(stamp, sizeof stamp, ",\"Timestamp\":%s", cts[i]);
        if (decode_error)
            snprintf(derr, sizeof derr, ",\"decode_error\":\"%s\"", decode_error);
        snprintf(line, sizeof line,
                 "{\"timestamp\":%s,\"provider\":\"Microsoft-Windows-DotNETRuntimeRundown\",\"event_id\":300,"
                 "\"version\":0,\"name\":\"ExecutionCheckpoint\",\"thread_id\":25112,\"sequence\":%d,\"fields\":{\"ClrInstanceID\":9,"
                 "\"Name\":\"%s\"%s},\"field_source\":\"manifest\"%s,\"maps\":{\"ClrInstanceID\":\"Nine\"},"
                 "\"stack\":[],\"activity_id\":\"00000000-0000-0000-0000-000000000000\",\"related_activity_id\":\"00000000-0000-0000-0000-000000000000\"}\n",
                 ts[i], i + 1, names[i], stamp, derr);
        strcat(want, line);
    }
    ck_assert_str_eq(out, want);
}

START_TEST(manifest_decodes_fields) {
    char *p = fixture(CHECKPOINTS);
    if (p == NULL)
        return;
    char *y = manifest_file("checkpoint.yaml");
    run_tool_result r;
    run(&r, "dump", "--json", "--manifest", y);
    ck_assert_int_eq(r.status, 2); /* no trace given */
    run_tool_free(&r);
    const char *argv[] = {tool(), "dump", "--json", "--manifest", y, p, NULL};
    ck_assert_int_eq(run_tool(argv, NULL, &r), 0);
    ck_assert_int_eq(r.status, 0);
    want_checkpoints(r.out, 1, NULL);
    ck_assert_str_eq(r.err, "");
    run_tool_free(&r);
    /* text form: the map names after the fields */
    const char *argv2[] = {tool(), "dump", "--manifest", y, p, NULL};
    ck_assert_int_eq(run_tool(argv2, NULL, &r), 0);
    ck_assert_int_eq(r.status, 0);
    ck_assert_msg(strncmp(r.out,
                          "11111943296237 Microsoft-Windows-DotNETRuntimeRundown/300/v0 ExecutionCheckpoint tid=25112 seq=1 "
                          "{\"ClrInstanceID\":9,\"Name\":\"RuntimeInit\",\"Timestamp\":11111925598665} "
                          "maps={\"ClrInstanceID\":\"Nine\"}\n",
                          188) == 0,
                  "%s", r.out);
    run_tool_free(&r);
    free(y);
    free(p);
}
END_TEST

/* Payloads that do not match the template: each event reported on stderr, every event printed. */
START_TEST(manifest_mismatch_reported) {
    char *p = fixture(CHECKPOINTS);
    if (p == NULL)
        return;
    static const char *const files[] = {"checkpoint-short.yaml", "checkpoint-trailing.yaml"};
    static const char *const what[] = {"ends inside a field (too short)", "has bytes after the last field"};
    for (int k = 0; k < 2; k++) {
        char *y = manifest_file(files[k]);
        run_tool_result r;
        const char *argv[] = {tool(), "dump", "--json", "--manifest", y, p, NULL};
        ck_assert_int_eq(run_tool(argv, NULL, &r), 0);
        ck_assert_int_eq(r.status, 0);
        want_checkpoints(r.out, k == 0, k == 0 ? "short" : "trailing");
        char want[2048] = "";
        static const char *const offs[] = {"384", "441", "485"};
        static const char *const sizes[] = {"34", "40", "40"};
        for (int i = 0; i < 3; i++) {
            char line[600];
            snprintf(line, sizeof line,
                     "mantra dump: %s: offset %s: Microsoft-Windows-DotNETRuntimeRundown/300/v0: the payload (%s "
                     "bytes) %s of the manifest's template\n",
                     p, offs[i], sizes[i], what[k]);
            strcat(want, line);
        }
        ck_assert_str_eq(r.err, want);
        run_tool_free(&r);
        run(&r, "stats", "--json", "--manifest", y);
        run_tool_free(&r);
        const char *argv2[] = {tool(), "stats", "--json", "--manifest", y, p, NULL};
        ck_assert_int_eq(run_tool(argv2, NULL, &r), 0);
        ck_assert_int_eq(r.status, 0);
        ck_assert_msg(strstr(r.out, ",\"dropped\":0,\"manifest_events\":3,\"decode_errors\":3,") != NULL, "%s",
                      r.out);
        run_tool_free(&r);
        free(y);
    }
    free(p);
}
END_TEST

START_TEST(manifest_errors_located) {
    char *p = fixture(CHECKPOINTS);
    if (p == NULL)
        return;
    char *y = manifest_file("bad.yaml");
    static const char *const cmds[] = {"dump", "stats"};
    for (int k = 0; k < 2; k++) {
        run_tool_result r;
        const char *argv[] = {tool(), cmds[k], "--manifest", y, p, NULL};
        ck_assert_int_eq(run_tool(argv, NULL, &r), 0);
        ck_assert_int_eq(r.status, 1);
        char want[2048];
        snprintf(want, sizeof want,
                 "%s:6:41: error: YAML syntax error: did not find expected ',' or '}'\n"
                 "%s:6:41: note: while parsing a flow mapping (started at line 6, column 19)\n",
                 y, y);
        ck_assert_str_eq(r.err, want);
        ck_assert_str_eq(r.out, "");
        run_tool_free(&r);
    }
    /* an ETW XML manifest: the command that converts it */
    const char *man = "/dev/null/ClrEtwAll.man";
    run_tool_result r;
    const char *argv[] = {tool(), "dump", "--manifest", man, p, NULL};
    ck_assert_int_eq(run_tool(argv, NULL, &r), 0);
    ck_assert_int_eq(r.status, 1);
    ck_assert_str_eq(r.err, "/dev/null/ClrEtwAll.man:1:1: error: an ETW XML manifest; mantra reads the YAML spelling: "
                            "convert it with `mantra-gen --emit-yaml /dev/null/ClrEtwAll.man > NAME.yaml` and pass "
                            "that file\n");
    run_tool_free(&r);
    free(y);
    free(p);
}
END_TEST

START_TEST(manifest_path_env) {
    char *p = fixture(CHECKPOINTS);
    if (p == NULL)
        return;
    char *y = manifest_file("checkpoint.yaml");
    char *bad = manifest_file("bad.yaml");
    char env[4096];
    snprintf(env, sizeof env, "::%s:", y); /* empty entries are skipped */
    ck_assert_int_eq(setenv("MANTRA_MANIFEST_PATH", env, 1), 0);
    run_tool_result r;
    run(&r, "dump", "--json", p, NULL);
    ck_assert_int_eq(r.status, 0);
    want_checkpoints(r.out, 1, NULL);
    run_tool_free(&r);
    run(&r, "stats", "--json", p, NULL);
    ck_assert_msg(strstr(r.out, "\"manifest_events\":3,\"decode_errors\":0,") != NULL, "%s", r.out);
    run_tool_free(&r);
    /* --manifest comes first: the trailing variant wins over the path's manifest */
    char *t = manifest_file("checkpoint-trailing.yaml");
    const char *argv[] = {tool(), "dump", "--json", "--manifest", t, p, NULL};
    ck_assert_int_eq(run_tool(argv, NULL, &r), 0);
    want_checkpoints(r.out, 0, "trailing");
    run_tool_free(&r);
    /* a bad file on the path: located error, exit 1 */
    snprintf(env, sizeof env, "%s:%s", y, bad);
    ck_assert_int_eq(setenv("MANTRA_MANIFEST_PATH", env, 1), 0);
    run(&r, "stats", p, NULL, NULL);
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strncmp(r.err, bad, strlen(bad)) == 0 && strstr(r.err, ":6:41: error: YAML syntax error") != NULL,
                  "%s", r.err);
    run_tool_free(&r);
    unsetenv("MANTRA_MANIFEST_PATH");
    free(t);
    free(bad);
    free(y);
    free(p);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("cli");
    TCase *tc = tcase_create("cli");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, help_and_version);
    tcase_add_test(tc, usage_errors);
    tcase_add_test(tc, stats_clock);
    tcase_add_test(tc, missing_file);
    tcase_add_test(tc, stats_json_exact);
    tcase_add_test(tc, stats_text_table_by_count);
    tcase_add_test(tc, stats_truncated_and_netperf);
    tcase_add_test(tc, dump_json_exact);
    tcase_add_test(tc, dump_sorted_v6);
    tcase_add_test(tc, manifest_decodes_fields);
    tcase_add_test(tc, manifest_mismatch_reported);
    tcase_add_test(tc, manifest_errors_located);
    tcase_add_test(tc, manifest_path_env);
    suite_add_tcase(s, tc);
    return s;
}

MANTRA_CHECK_MAIN(suite)
