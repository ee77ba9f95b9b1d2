/* The invalid-manifest corpus: every file in tests/gen/invalid/ holds exactly one problem, and
 * `mantra-gen --validate FILE` must print exactly NAME.expected on stderr, nothing on stdout, exit 1
 * and never show a Python traceback. Also: ClrEtwAll.man (shared fixtures) validates cleanly.
 *
 * Environment (set by CTest): MANTRA_SOURCE_DIR (repo root, the tool runs there so that it prints
 * relative paths), MANTRA_GEN (tools/mantra-gen), MANTRA_SHARED_DIR (../shared), and
 * MANTRA_REQUIRE_INTEROP=1 to fail instead of skipping when the shared fixtures are absent. */
#define _POSIX_C_SOURCE 200809L

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "run_tool.h"

#define CORPUS_DIR "tests/gen/invalid"
#define MIN_CORPUS 45
#define CLR_MANIFEST "fixtures/manifests/ClrEtwAll-coreclr-2019.man"

static const char *source_dir;
static char *gen_path;
static char **manifests;        /* sorted names of the corpus' manifests */
static size_t manifest_count;
static const char *const manifest_suffixes[] = {".yaml", ".yml", ".xml", ".man", NULL};

static char *corpus_path(const char *name)
{
    char *dir = run_tool_path(source_dir, CORPUS_DIR);
    char *path = run_tool_path(dir, name);
    free(dir);
    return path;
}

static char *with_suffix(const char *name, const char *suffix)
{
    size_t n = strlen(name), s = strlen(suffix);
    char *out = malloc(n + s + 1);
    ck_assert_ptr_nonnull(out);
    memcpy(out, name, n);
    memcpy(out + n, suffix, s + 1);
    return out;
}

START_TEST(invalid_manifest)
{
    const char *name = manifests[_i];
    char *rel = run_tool_path(CORPUS_DIR, name);
    char *expected_name = with_suffix(name, ".expected");
    char *expected_path = corpus_path(expected_name);
    size_t expected_len = 0;
    char *expected = run_tool_read_file(expected_path, &expected_len);
    ck_assert_msg(expected != NULL, "%s: cannot read %s", name, expected_path);

    const char *argv[] = {gen_path, "--validate", rel, NULL};
    run_tool_result r;
    int rc = run_tool(argv, source_dir, &r);
    ck_assert_msg(rc == 0, "%s: %s", name, r.err);

    ck_assert_msg(strstr(r.out, "Traceback") == NULL && strstr(r.err, "Traceback") == NULL,
                  "%s: the tool crashed:\n%s%s", name, r.out, r.err);
    ck_assert_msg(r.status == 1, "%s: exit status %d, expected 1; stderr:\n%s", name, r.status, r.err);
    ck_assert_msg(r.out_len == 0, "%s: expected no stdout, got:\n%s", name, r.out);
    ck_assert_msg(r.err_len == expected_len && memcmp(r.err, expected, expected_len) == 0,
                  "%s: stderr differs from %s\n--- expected\n%s--- actual\n%s", name, expected_name,
                  expected, r.err);

    run_tool_free(&r);
    free(expected);
    free(expected_path);
    free(expected_name);
    free(rel);
}
END_TEST

/* The corpus is big enough and every manifest has its .expected file and the other way round. */
START_TEST(corpus_is_complete)
{
    ck_assert_msg(manifest_count >= MIN_CORPUS, "only %zu invalid manifests, want at least %d",
                  manifest_count, MIN_CORPUS);
    for (size_t i = 0; i < manifest_count; i++) {
        char *expected_name = with_suffix(manifests[i], ".expected");
        char *path = corpus_path(expected_name);
        struct stat st;
        ck_assert_msg(stat(path, &st) == 0, "%s has no %s", manifests[i], expected_name);
        free(path);
        free(expected_name);
    }
    char *dir = run_tool_path(source_dir, CORPUS_DIR);
    const char *const expected_suffix[] = {".expected", NULL};
    size_t n = 0;
    char **expected = run_tool_list_dir(dir, expected_suffix, &n);
    ck_assert_ptr_nonnull(expected);
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(expected[i]) - strlen(".expected");
        int found = 0;
        for (size_t j = 0; j < manifest_count && !found; j++)
            found = strlen(manifests[j]) == len && strncmp(manifests[j], expected[i], len) == 0;
        ck_assert_msg(found, "%s has no manifest", expected[i]);
    }
    run_tool_free_list(expected, n);
    free(dir);
}
END_TEST

/* The real ClrEtwAll.man of the .NET runtime is valid. */
START_TEST(clr_etw_all_validates)
{
    const char *shared = run_tool_env("MANTRA_SHARED_DIR", NULL);
    int required = strcmp(run_tool_env("MANTRA_REQUIRE_INTEROP", "0"), "1") == 0;
    char *path = shared != NULL ? run_tool_path(shared, CLR_MANIFEST) : NULL;
    struct stat st;
    if (path == NULL || stat(path, &st) != 0) {
        ck_assert_msg(!required, "MANTRA_REQUIRE_INTEROP=1 but %s is missing",
                      path != NULL ? path : "MANTRA_SHARED_DIR (unset)");
        printf("test_invalid_manifests: SKIP clr_etw_all_validates: %s\n",
               path != NULL ? "the shared ClrEtwAll fixture is missing" : "MANTRA_SHARED_DIR is not set");
        fflush(stdout);
        free(path);
        return;
    }
    const char *argv[] = {gen_path, "--validate", path, NULL};
    run_tool_result r;
    ck_assert_msg(run_tool(argv, source_dir, &r) == 0, "%s", r.err);
    ck_assert_msg(r.status == 0 && r.out_len == 0 && r.err_len == 0,
                  "ClrEtwAll: exit status %d\nstdout:\n%s\nstderr:\n%s", r.status, r.out, r.err);
    run_tool_free(&r);
    free(path);
}
END_TEST

int main(void)
{
    source_dir = run_tool_env("MANTRA_SOURCE_DIR", NULL);
    if (source_dir == NULL) {
        fprintf(stderr, "test_invalid_manifests: MANTRA_SOURCE_DIR is not set (run through ctest)\n");
        return 1;
    }
    const char *gen = run_tool_env("MANTRA_GEN", NULL);
    gen_path = gen != NULL ? strdup(gen) : run_tool_path(source_dir, "tools/mantra-gen");
    char *dir = run_tool_path(source_dir, CORPUS_DIR);
    manifests = run_tool_list_dir(dir, manifest_suffixes, &manifest_count);
    if (manifests == NULL) {
        fprintf(stderr, "test_invalid_manifests: cannot read %s\n", dir);
        return 1;
    }
    free(dir);

    Suite *s = suite_create("invalid_manifests");
    TCase *corpus = tcase_create("corpus");
    tcase_set_timeout(corpus, 60);
    tcase_add_loop_test(corpus, invalid_manifest, 0, (int)manifest_count);
    tcase_add_test(corpus, corpus_is_complete);
    suite_add_tcase(s, corpus);
    TCase *clr = tcase_create("clr");
    tcase_set_timeout(clr, 120);
    tcase_add_test(clr, clr_etw_all_validates);
    suite_add_tcase(s, clr);

    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    run_tool_free_list(manifests, manifest_count);
    free(gen_path);
    return failed == 0 ? 0 : 1;
}
