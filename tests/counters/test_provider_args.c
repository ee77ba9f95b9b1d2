/* Provider entries' ARGS (mantra_provider_spec.args, mantra_provider_spec_arg): what dotnet-trace
 * and dotnet-counters send as filter data parses to the exact values; errors carry their column. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "mantra/session.h"

static mantra_provider_spec g_specs[8];

static size_t parse_ok(const char *spec) {
    size_t n = 0, col = 0;
    int rc = mantra_provider_spec_parse(spec, g_specs, 8, &n, &col);
    ck_assert_msg(rc == 0, "%s: %s", spec, mantra_session_last_error());
    return n;
}

static void expect_arg(const mantra_provider_spec *p, const char *key, int want_rc, const char *want) {
    char v[256];
    int rc = mantra_provider_spec_arg(p, key, v, sizeof v);
    ck_assert_msg(rc == want_rc, "%s: rc %d want %d", key, rc, want_rc);
    ck_assert_str_eq(v, want);
}

START_TEST(args_are_kept_byte_for_byte) {
    ck_assert_uint_eq(parse_ok("Mantra.Runtime:0:5:EventCounterIntervalSec=1"), 1);
    ck_assert_str_eq(g_specs[0].name, "Mantra.Runtime");
    ck_assert_uint_eq(g_specs[0].keywords, 0);
    ck_assert_uint_eq(g_specs[0].level, 5);
    ck_assert_str_eq(g_specs[0].args, "EventCounterIntervalSec=1");
    expect_arg(&g_specs[0], "EventCounterIntervalSec", 1, "1");
    expect_arg(&g_specs[0], "eventcounterintervalsec", 0, ""); /* keys are case-sensitive */
    expect_arg(&g_specs[0], "EventCounterInterval", 0, "");

    /* without ARGS: "" */
    ck_assert_uint_eq(parse_ok("A:0x1:5,B"), 2);
    ck_assert_str_eq(g_specs[0].args, "");
    ck_assert_str_eq(g_specs[1].args, "");
    expect_arg(&g_specs[0], "x", 0, "");
    /* empty keywords and level, then ARGS; a second entry after it */
    ck_assert_uint_eq(parse_ok("P:::k=v,Q:0x2:4:a=b;c=d"), 2);
    ck_assert_uint_eq(g_specs[0].level, 4);
    ck_assert_str_eq(g_specs[0].args, "k=v");
    ck_assert_str_eq(g_specs[1].args, "a=b;c=d");
    expect_arg(&g_specs[1], "c", 1, "d");
    /* ARGS may hold ':' (dotnet-trace splits an entry at its first three ':' only) */
    ck_assert_uint_eq(parse_ok("P:0:5:Url=http://x:80/y"), 1);
    expect_arg(&g_specs[0], "Url", 1, "http://x:80/y");
}
END_TEST

START_TEST(dotnet_counters_filter_data) {
    /* the two entries dotnet-counters monitor sends (../shared/reference/diagnostics-ipc.md,
     * `dotnet-counters monitor|collect -p PID`), with the Metrics list quoted for its comma */
    const char *spec =
        "System.Runtime:0:4:EventCounterIntervalSec=1,"
        "System.Diagnostics.Metrics:0x2:4:SessionId=SHARED;Metrics=\"System.Runtime,Mantra.Runtime\";"
        "RefreshInterval=1;MaxTimeSeries=1000;MaxHistograms=10;ClientId=5e0e1a3b-2f41-4c7e-9d7d-0a1b2c3d4e5f";
    ck_assert_uint_eq(parse_ok(spec), 2);
    expect_arg(&g_specs[0], "EventCounterIntervalSec", 1, "1");
    ck_assert_uint_eq(g_specs[1].keywords, 2);
    expect_arg(&g_specs[1], "SessionId", 1, "SHARED");
    expect_arg(&g_specs[1], "Metrics", 1, "System.Runtime,Mantra.Runtime");
    expect_arg(&g_specs[1], "RefreshInterval", 1, "1");
    expect_arg(&g_specs[1], "MaxTimeSeries", 1, "1000");
    expect_arg(&g_specs[1], "MaxHistograms", 1, "10");
    expect_arg(&g_specs[1], "ClientId", 1, "5e0e1a3b-2f41-4c7e-9d7d-0a1b2c3d4e5f");
}
END_TEST

START_TEST(quoted_values_and_odd_pairs) {
    /* dotnet-trace's test input (dotnet/diagnostics, ProviderParsingTests.cs) */
    ck_assert_uint_eq(parse_ok("VeryCoolProvider:0x1:5:FilterAndPayloadSpecs=\"QuotedValue\""), 1);
    expect_arg(&g_specs[0], "FilterAndPayloadSpecs", 1, "QuotedValue");
    /* quotes protect ';' '=' and ','; a value that is not wholly quoted keeps its quotes */
    ck_assert_uint_eq(parse_ok("P:0:5:a=\"x;y=z,w\";b=1\"2\";c;d=;=e;a=second"), 1);
    ck_assert_str_eq(g_specs[0].args, "a=\"x;y=z,w\";b=1\"2\";c;d=;=e;a=second");
    expect_arg(&g_specs[0], "a", 1, "x;y=z,w"); /* the first of two wins */
    expect_arg(&g_specs[0], "b", 1, "1\"2\"");
    expect_arg(&g_specs[0], "c", 1, "");       /* a pair without '=' */
    expect_arg(&g_specs[0], "d", 1, "");
    expect_arg(&g_specs[0], "", 1, "e");
    /* too small a buffer */
    char small[4];
    ck_assert_int_eq(mantra_provider_spec_arg(&g_specs[0], "a", small, sizeof small), MANTRA_ERANGE);
    ck_assert_str_eq(small, "");
    ck_assert_int_eq(mantra_provider_spec_arg(&g_specs[0], "a", small, 0), MANTRA_EINVAL);
    ck_assert_int_eq(mantra_provider_spec_arg(NULL, "a", small, sizeof small), MANTRA_EINVAL);
}
END_TEST

START_TEST(args_errors_have_positions) {
    size_t n, col = 0;
    ck_assert_int_eq(mantra_provider_spec_parse("P:0:5:a=\"open,Q", g_specs, 8, &n, &col), MANTRA_EINVAL);
    ck_assert_uint_eq(col, 9);
    ck_assert_str_eq(mantra_session_last_error(), "providers:9: unterminated quote in provider arguments");
    /* 1023 bytes fit, 1024 do not */
    static char spec[2100];
    memcpy(spec, "P:0:5:", 6);
    memset(spec + 6, 'x', 1023);
    spec[6 + 1023] = 0;
    ck_assert_int_eq(mantra_provider_spec_parse(spec, g_specs, 8, &n, &col), 0);
    ck_assert_uint_eq(strlen(g_specs[0].args), 1023);
    memcpy(spec + 6 + 1023, "x,Q", 4);
    col = 0;
    ck_assert_int_eq(mantra_provider_spec_parse(spec, g_specs, 8, &n, &col), MANTRA_EINVAL);
    ck_assert_uint_eq(col, 7);
    ck_assert_str_eq(mantra_session_last_error(), "providers:7: provider arguments too long (at most 1023 bytes)");
}
END_TEST

START_TEST(format_round_trips) {
    char out[512];
    /* what a diagnostics server gets from dotnet-counters: the Metrics list holds commas */
    const char *metrics = "SessionId=SHARED;Metrics=System.Runtime,Mantra.Runtime;RefreshInterval=1;ClientId=x";
    int n = mantra_provider_spec_format("System.Diagnostics.Metrics", 2, 4, metrics, out, sizeof out);
    ck_assert_str_eq(out, "System.Diagnostics.Metrics:0x2:4:"
                          "SessionId=SHARED;Metrics=\"System.Runtime,Mantra.Runtime\";RefreshInterval=1;ClientId=x");
    ck_assert_int_eq(n, (int)strlen(out));
    ck_assert_uint_eq(parse_ok(out), 1);
    ck_assert_str_eq(g_specs[0].name, "System.Diagnostics.Metrics");
    ck_assert_uint_eq(g_specs[0].keywords, 2);
    ck_assert_uint_eq(g_specs[0].level, 4);
    expect_arg(&g_specs[0], "Metrics", 1, "System.Runtime,Mantra.Runtime");
    expect_arg(&g_specs[0], "ClientId", 1, "x");

    n = mantra_provider_spec_format("Mantra.Runtime", 0, 5, "EventCounterIntervalSec=1", out, sizeof out);
    ck_assert_str_eq(out, "Mantra.Runtime:0x0:5:EventCounterIntervalSec=1");
    ck_assert_int_eq(n, 46);
    n = mantra_provider_spec_format("P", UINT64_MAX, 255, NULL, out, sizeof out);
    ck_assert_str_eq(out, "P:0xffffffffffffffff:255");
    ck_assert_uint_eq(parse_ok(out), 1);
    ck_assert_uint_eq(g_specs[0].keywords, UINT64_MAX);
    /* already quoted, a pair without '=', a trailing ';' */
    mantra_provider_spec_format("P", 1, 4, "a=\"x,y\";b;d=1;", out, sizeof out);
    ck_assert_str_eq(out, "P:0x1:4:a=\"x,y\";b;d=1;");
    ck_assert_int_eq(mantra_provider_spec_format("P", 1, 4, "b,c;d=1", out, sizeof out), MANTRA_EINVAL);
    ck_assert_str_eq(mantra_session_last_error(), "provider arguments: a key holds ','");

    ck_assert_int_eq(mantra_provider_spec_format("P", 0, 4, "a=x\"y,z", out, sizeof out), MANTRA_EINVAL);
    ck_assert_str_eq(mantra_session_last_error(), "provider arguments: unbalanced or inner quote");
    ck_assert_int_eq(mantra_provider_spec_format("A:B", 0, 4, NULL, out, sizeof out), MANTRA_EINVAL);
    ck_assert_int_eq(mantra_provider_spec_format("", 0, 4, NULL, out, sizeof out), MANTRA_EINVAL);
    ck_assert_int_eq(mantra_provider_spec_format("Mantra.Runtime", 0, 5, "k=v", out, 20), MANTRA_ERANGE);
    ck_assert_str_eq(out, "");
}
END_TEST

int main(void) {
    Suite *s = suite_create("provider_args");
    TCase *tc = tcase_create("args");
    tcase_add_test(tc, args_are_kept_byte_for_byte);
    tcase_add_test(tc, dotnet_counters_filter_data);
    tcase_add_test(tc, quoted_values_and_odd_pairs);
    tcase_add_test(tc, args_errors_have_positions);
    tcase_add_test(tc, format_round_trips);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
