/* test_image_cli.c - `mantra image` (tools/mantra/image.c) on its refusals: usage, a file that is
 * not a PE file, an IL-only assembly (test_ecma's tiny.dll) and a ReadyToRun image without
 * metadata (test_r2r's r2r.dll), each with its exit status and message. The reading of real images
 * is checked against crossgen2 in interop-r2r-corelib and interop-pgo-real. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "gen/run_tool.h"

static void image(run_tool_result *r, const char *a, const char *b) {
    const char *argv[5] = {run_tool_env("MANTRA_TOOL", "build/tools/mantra"), "image", a, b, NULL};
    ck_assert_int_eq(run_tool(argv, NULL, r), 0);
}

static char *built(const char *name) {
    return run_tool_path(run_tool_env("MANTRA_BINARY_DIR", "build"), name);
}

START_TEST(usage_and_help) {
    run_tool_result r;
    image(&r, NULL, NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "Usage: mantra image [--json] FILE"));
    run_tool_free(&r);
    image(&r, "--help", NULL);
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "--json   one JSON object: format (\"mantra\" or \"r2r\"), module, mvid, methods"));
    run_tool_free(&r);
    image(&r, "--frobnicate", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "unknown option '--frobnicate'"));
    run_tool_free(&r);
}
END_TEST

START_TEST(refusals) {
    run_tool_result r;
    image(&r, "--json", "tests/tools/test_image_cli.c"); /* the source tree's own text: not a PE file */
    ck_assert_int_eq(r.status, 1);
    ck_assert_str_eq(r.err, "mantra image: tests/tools/test_image_cli.c: offset 0: not a PE file: no MS-DOS header (\"MZ\" "
                            "and 64 bytes) (neither a mantra image nor a ReadyToRun PE file)\n");
    ck_assert_str_eq(r.out, "");
    run_tool_free(&r);
    char *tiny = built("tests/ecma/tiny.dll");
    image(&r, tiny, NULL);
    ck_assert_int_eq(r.status, 1);
    ck_assert_ptr_nonnull(strstr(r.err, ": a PE file without a ReadyToRun header (an IL-only assembly?)\n"));
    run_tool_free(&r);
    char *r2r = built("tests/ecma/r2r.dll");
    image(&r, "--json", r2r);
    ck_assert_int_eq(r.status, 1);
    ck_assert_ptr_nonnull(strstr(r.err, "r2r.dll: offset 0: "));
    ck_assert_str_eq(r.out, "");
    run_tool_free(&r);
    free(tiny);
    free(r2r);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("image_cli");
    TCase *tc = tcase_create("image_cli");
    tcase_add_test(tc, usage_and_help);
    tcase_add_test(tc, refusals);
    suite_add_tcase(s, tc);
    return s;
}

MANTRA_CHECK_MAIN(suite)
