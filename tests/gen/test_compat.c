/* The breaking-change check: for every case NAME in tests/gen/compat/ (NAME.old.yaml|xml,
 * NAME.new.yaml|xml, NAME.expected), `mantra-gen --compat OLD NEW` run from the source root must
 * print exactly what NAME.expected says:
 *
 *     exit: N
 *     --- stderr
 *     ...breaking changes (errors), or the diagnostics of a manifest that does not load...
 *     --- stdout
 *     ...additions (notes) and the summary line...
 *
 * Environment (set by CTest): MANTRA_SOURCE_DIR (repo root), MANTRA_GEN (tools/mantra-gen). */
#define _POSIX_C_SOURCE 200809L

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "run_tool.h"

#define CASE_DIR "tests/gen/compat"
#define STDERR_MARK "--- stderr\n"
#define STDOUT_MARK "--- stdout\n"

static const char *source_dir;
static char *gen_path;
static char **cases;            /* sorted NAME.expected file names */
static size_t case_count;
static const char *const spellings[] = {".yaml", ".xml", ".yml", ".man", NULL};

/* CASE_DIR/NAME.<which><ext> for the first spelling that exists, relative to the source root. */
static char *find_side(const char *name, const char *which)
{
    for (size_t i = 0; spellings[i] != NULL; i++) {
        size_t len = strlen(CASE_DIR) + strlen(name) + strlen(which) + strlen(spellings[i]) + 3;
        char *rel = malloc(len);
        ck_assert_ptr_nonnull(rel);
        snprintf(rel, len, "%s/%s.%s%s", CASE_DIR, name, which, spellings[i]);
        char *abs = run_tool_path(source_dir, rel);
        struct stat st;
        int found = stat(abs, &st) == 0;
        free(abs);
        if (found)
            return rel;
        free(rel);
    }
    return NULL;
}

typedef struct expectation {
    int status;
    const char *err;
    size_t err_len;
    const char *out;
    size_t out_len;
} expectation;

static int parse_expected(char *text, expectation *e)
{
    char *err_mark, *out_mark;
    if (sscanf(text, "exit: %d\n", &e->status) != 1)
        return -1;
    if ((err_mark = strstr(text, "\n" STDERR_MARK)) == NULL)
        return -1;
    e->err = err_mark + 1 + strlen(STDERR_MARK);
    if ((out_mark = strstr(e->err - 1, "\n" STDOUT_MARK)) == NULL)
        return -1;
    e->err_len = (size_t)(out_mark + 1 - e->err);   /* 0 when the marks are adjacent */
    e->out = out_mark + 1 + strlen(STDOUT_MARK);
    e->out_len = strlen(e->out);
    return 0;
}

START_TEST(compat_case)
{
    const char *file = cases[_i];
    size_t name_len = strlen(file) - strlen(".expected");
    char *name = strndup(file, name_len);
    ck_assert_ptr_nonnull(name);
    char *old_rel = find_side(name, "old");
    char *new_rel = find_side(name, "new");
    ck_assert_msg(old_rel != NULL && new_rel != NULL, "%s: missing %s.old.* or %s.new.*", name, name, name);

    char *dir = run_tool_path(source_dir, CASE_DIR);
    char *expected_path = run_tool_path(dir, file);
    char *text = run_tool_read_file(expected_path, NULL);
    ck_assert_msg(text != NULL, "cannot read %s", expected_path);
    expectation want;
    ck_assert_msg(parse_expected(text, &want) == 0,
                  "%s: want 'exit: N', '--- stderr' and '--- stdout' lines", file);

    const char *argv[] = {gen_path, "--compat", old_rel, new_rel, NULL};
    run_tool_result r;
    ck_assert_msg(run_tool(argv, source_dir, &r) == 0, "%s: %s", name, r.err);
    ck_assert_msg(strstr(r.out, "Traceback") == NULL && strstr(r.err, "Traceback") == NULL,
                  "%s: the tool crashed:\n%s%s", name, r.out, r.err);
    ck_assert_msg(r.status == want.status, "%s: exit status %d, expected %d\nstderr:\n%s", name, r.status,
                  want.status, r.err);
    ck_assert_msg(r.err_len == want.err_len && memcmp(r.err, want.err, want.err_len) == 0,
                  "%s: stderr differs\n--- expected\n%.*s--- actual\n%s", name, (int)want.err_len, want.err, r.err);
    ck_assert_msg(r.out_len == want.out_len && memcmp(r.out, want.out, want.out_len) == 0,
                  "%s: stdout differs\n--- expected\n%s--- actual\n%s", name, want.out, r.out);

    run_tool_free(&r);
    free(text);
    free(expected_path);
    free(dir);
    free(old_rel);
    free(new_rel);
    free(name);
}
END_TEST

/* Every NAME.old.* has its NAME.expected (a case without one would silently never run). */
START_TEST(cases_are_complete)
{
    ck_assert_msg(case_count > 0, "no compat cases in %s", CASE_DIR);
    char *dir = run_tool_path(source_dir, CASE_DIR);
    const char *const old_suffixes[] = {".old.yaml", ".old.xml", ".old.yml", ".old.man", NULL};
    size_t n = 0;
    char **olds = run_tool_list_dir(dir, old_suffixes, &n);
    ck_assert_ptr_nonnull(olds);
    for (size_t i = 0; i < n; i++) {
        size_t len = (size_t)(strstr(olds[i], ".old.") - olds[i]);
        int found = 0;
        for (size_t j = 0; j < case_count && !found; j++)
            found = strlen(cases[j]) == len + strlen(".expected") && strncmp(cases[j], olds[i], len) == 0;
        ck_assert_msg(found, "%s has no .expected file", olds[i]);
    }
    run_tool_free_list(olds, n);
    free(dir);
}
END_TEST

int main(void)
{
    source_dir = run_tool_env("MANTRA_SOURCE_DIR", NULL);
    if (source_dir == NULL) {
        fprintf(stderr, "test_compat: MANTRA_SOURCE_DIR is not set (run through ctest)\n");
        return 1;
    }
    const char *gen = run_tool_env("MANTRA_GEN", NULL);
    gen_path = gen != NULL ? strdup(gen) : run_tool_path(source_dir, "tools/mantra-gen");
    char *dir = run_tool_path(source_dir, CASE_DIR);
    const char *const expected_suffix[] = {".expected", NULL};
    cases = run_tool_list_dir(dir, expected_suffix, &case_count);
    if (cases == NULL) {
        fprintf(stderr, "test_compat: cannot read %s\n", dir);
        return 1;
    }
    free(dir);

    Suite *s = suite_create("compat");
    TCase *tc = tcase_create("cases");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, compat_case, 0, (int)case_count);
    tcase_add_test(tc, cases_are_complete);
    suite_add_tcase(s, tc);

    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    run_tool_free_list(cases, case_count);
    free(gen_path);
    return failed == 0 ? 0 : 1;
}
