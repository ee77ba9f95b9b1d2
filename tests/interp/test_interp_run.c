/* test_interp_run - `mantra run` (tools/mantra/run.c) and the example programs: each
 * examples/programs/NAME.masm prints exactly NAME.expected; assembler errors print
 * FILE:LINE:COL: error: MESSAGE with exit status 1; run-time faults exit 1; usage errors 2;
 * --probes prints the counters; --trace writes a nettrace file. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "check_main.h"
#include "gen/run_tool.h"

static const char *tool(void) { return run_tool_env("MANTRA_TOOL", "build/tools/mantra"); }

static char *scratch(const char *name) {
    const char *bin = run_tool_env("MANTRA_BINARY_DIR", "build");
    char *dir = run_tool_path(bin, "tests/interp/run");
    mkdir(dir, 0777);
    char *p = run_tool_path(dir, name);
    free(dir);
    return p;
}

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

START_TEST(examples) {
    const char *src = run_tool_env("MANTRA_SOURCE_DIR", ".");
    char *dir = run_tool_path(src, "examples/programs");
    static const char *const suffixes[] = {".masm", NULL};
    size_t n = 0;
    char **names = run_tool_list_dir(dir, suffixes, &n);
    ck_assert_ptr_nonnull(names);
    ck_assert_uint_ge(n, 6);
    for (size_t i = 0; i < n; i++) {
        char *prog = run_tool_path(dir, names[i]);
        char exp_name[256];
        snprintf(exp_name, sizeof exp_name, "%.*s.expected", (int)(strlen(names[i]) - 5), names[i]);
        char *exp_path = run_tool_path(dir, exp_name);
        size_t len;
        char *want = run_tool_read_file(exp_path, &len);
        ck_assert_msg(want != NULL, "%s missing", exp_path);
        const char *argv[] = {tool(), "run", prog, NULL};
        run_tool_result r;
        ck_assert_int_eq(run_tool(argv, NULL, &r), 0);
        ck_assert_msg(r.status == 0, "%s: status %d: %s", names[i], r.status, r.err);
        ck_assert_str_eq(r.err, "");
        ck_assert_msg(strcmp(r.out, want) == 0, "%s printed:\n%s\nexpected:\n%s", names[i], r.out, want);
        run_tool_free(&r);
        free(want);
        free(exp_path);
        free(prog);
    }
    run_tool_free_list(names, n);
    free(dir);
}
END_TEST

START_TEST(entry_and_arguments) {
    const char *argv[] = {tool(), "run", "examples/programs/fib.masm", "--entry", "fib_of", "25", NULL};
    run_tool_result r;
    ck_assert_int_eq(run_tool(argv, NULL, &r), 0);
    ck_assert_int_eq(r.status, 0);
    ck_assert_str_eq(r.out, "fib(25) = 75025\n");
    run_tool_free(&r);
    const char *argv2[] = {tool(), "run", "examples/programs/fib.masm", "--entry", "fib_of", "x", NULL};
    ck_assert_int_eq(run_tool(argv2, NULL, &r), 0);
    ck_assert_int_eq(r.status, 1);
    ck_assert_str_eq(r.err, "mantra run: argument 1 'x' is not an int64\n");
    run_tool_free(&r);
    const char *argv3[] = {tool(), "run", "examples/programs/fib.masm", "--entry", "fib_of", NULL};
    ck_assert_int_eq(run_tool(argv3, NULL, &r), 0);
    ck_assert_int_eq(r.status, 1);
    ck_assert_str_eq(r.err, "mantra run: examples/programs/fib.masm: 'fib_of' takes 1 argument, 0 given\n");
    run_tool_free(&r);
}
END_TEST

START_TEST(assembler_error) {
    char *p = scratch("bad.masm");
    write_file(p, ".module B 00000000-0000-0000-0000-000000000001\n.method main void()\n  ldc.i8 1\n  jmp x\n.end\n");
    const char *argv[] = {tool(), "run", p, NULL};
    run_tool_result r;
    ck_assert_int_eq(run_tool(argv, NULL, &r), 0);
    ck_assert_int_eq(r.status, 1);
    ck_assert_str_eq(r.out, "");
    char want[512];
    snprintf(want, sizeof want, "%s:4:3: error: unknown opcode 'jmp'\n", p);
    ck_assert_str_eq(r.err, want);
    run_tool_free(&r);
    free(p);
}
END_TEST

START_TEST(runtime_fault) {
    char *p = scratch("fault.masm");
    write_file(p, ".module B 00000000-0000-0000-0000-000000000001\n.method N.main void()\n"
                  "  print.s \"before\\n\"\n  ldc.i8 1\n  ldc.i8 0\n  div\n  pop\n  ret\n.end\n");
    const char *argv[] = {tool(), "run", p, NULL};
    run_tool_result r;
    ck_assert_int_eq(run_tool(argv, NULL, &r), 0);
    ck_assert_int_eq(r.status, 1);
    ck_assert_str_eq(r.out, "before\n"); /* output written before the fault is kept */
    char want[512];
    snprintf(want, sizeof want, "mantra run: %s: N.main+IL_0017: integer division by zero\n", p);
    ck_assert_str_eq(r.err, want);
    run_tool_free(&r);
    free(p);
}
END_TEST

START_TEST(usage) {
    run_tool_result r;
    const char *a1[] = {tool(), "run", NULL};
    ck_assert_int_eq(run_tool(a1, NULL, &r), 0);
    ck_assert_int_eq(r.status, 2);
    run_tool_free(&r);
    const char *a2[] = {tool(), "run", "--frob", "x", NULL};
    ck_assert_int_eq(run_tool(a2, NULL, &r), 0);
    ck_assert_int_eq(r.status, 2);
    run_tool_free(&r);
    const char *a3[] = {tool(), "run", "--help", NULL};
    ck_assert_int_eq(run_tool(a3, NULL, &r), 0);
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "Usage: mantra run PROGRAM"));
    run_tool_free(&r);
    const char *a4[] = {tool(), "run", "no/such/file.masm", NULL};
    ck_assert_int_eq(run_tool(a4, NULL, &r), 0);
    ck_assert_int_eq(r.status, 1);
    run_tool_free(&r);
}
END_TEST

START_TEST(probes_from_environment) {
    setenv("MANTRA_InterpPgo", "1", 1);
    setenv("MANTRA_InterpPgoMethods", "*", 1);
    const char *argv[] = {tool(), "run", "examples/programs/loop.masm", "--probes", NULL};
    run_tool_result r;
    ck_assert_int_eq(run_tool(argv, NULL, &r), 0);
    ck_assert_int_eq(r.status, 0);
    /* loop.masm: `head` at IL_0018 is the target of the backward br: 11 tests of i < 10 */
    ck_assert_str_eq(r.err, "probe Examples.main 0x06000001 IL_0000 1\n"
                            "probe Examples.main 0x06000001 IL_0018 11\n");
    run_tool_free(&r);
    setenv("MANTRA_InterpPgo", "7", 1);
    ck_assert_int_eq(run_tool(argv, NULL, &r), 0);
    ck_assert_int_eq(r.status, 1);
    ck_assert_str_eq(r.err, "mantra run: MANTRA_InterpPgo must be 0, 1 or 2\n");
    run_tool_free(&r);
    unsetenv("MANTRA_InterpPgo");
}
END_TEST

START_TEST(trace) {
    char *t = scratch("run.nettrace");
    remove(t);
    const char *argv[] = {tool(), "run", "examples/programs/loop.masm", "--trace", t, NULL};
    run_tool_result r;
    ck_assert_int_eq(run_tool(argv, NULL, &r), 0);
    ck_assert_msg(r.status == 0, "%s", r.err);
    size_t len;
    char *bytes = run_tool_read_file(t, &len);
    ck_assert_ptr_nonnull(bytes);
    ck_assert_uint_ge(len, 8);
    ck_assert_int_eq(memcmp(bytes, "Nettrace", 8), 0);
    free(bytes);
    run_tool_free(&r);
    free(t);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("interp_run");
    TCase *tc = tcase_create("run");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, examples);
    tcase_add_test(tc, entry_and_arguments);
    tcase_add_test(tc, assembler_error);
    tcase_add_test(tc, runtime_fault);
    tcase_add_test(tc, usage);
    tcase_add_test(tc, probes_from_environment);
    tcase_add_test(tc, trace);
    suite_add_tcase(s, tc);
    return s;
}

MANTRA_CHECK_MAIN(suite)
