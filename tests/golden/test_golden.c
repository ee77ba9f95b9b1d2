/* Golden files and the generator's command line: tests/golden/alltypes.yaml regenerated (from YAML,
 * from its XML spelling and from YAML re-emitted from that XML) must equal tests/golden/expected/
 * byte for byte; the real ClrEtwAll.man and its YAML rendering must generate identical bytes;
 * --check, --list-outputs, rewrite-only-when-changed and the exit statuses. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check_main.h"
#include "gen/run_tool.h"

static const char *const KINDS[] = {"defs.h",    "registry.h", "registry.c", "writers.h",
                                    "writers.c", "readers.h",  "readers.c",  "events.md"};
#define NKINDS (sizeof KINDS / sizeof KINDS[0])

static char *g_scratch; /* $MANTRA_BINARY_DIR/test_golden */

static void mkdirs(const char *path) {
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p == '/') {
            *p = 0;
            mkdir(buf, 0755);
            *p = '/';
        }
    }
    ck_assert_msg(mkdir(buf, 0755) == 0 || errno == EEXIST, "mkdir %s", buf);
}

static char *scratch(const char *name) {
    char *p = run_tool_path(g_scratch, name);
    mkdirs(p);
    return p;
}

/* Runs the generator with the project's Python; returns the result (caller frees). */
static run_tool_result gen(const char *a1, const char *a2, const char *a3, const char *a4, const char *a5) {
    const char *argv[] = {run_tool_env("MANTRA_PYTHON", "python3"), run_tool_env("MANTRA_GEN", "tools/mantra-gen"),
                          a1, a2, a3, a4, a5, NULL};
    run_tool_result r;
    ck_assert_int_eq(run_tool(argv, run_tool_env("MANTRA_SOURCE_DIR", "."), &r), 0);
    ck_assert_msg(strstr(r.err, "Traceback") == NULL, "traceback: %s", r.err);
    return r;
}

static void write_file(const char *path, const char *data, size_t len) {
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(data, 1, len, f), len);
    ck_assert_int_eq(fclose(f), 0);
}

static void assert_same_files(const char *dir_a, const char *base_a, const char *dir_b, const char *base_b) {
    for (size_t i = 0; i < NKINDS; i++) {
        char name_a[256], name_b[256];
        snprintf(name_a, sizeof name_a, "%s_%s", base_a, KINDS[i]);
        snprintf(name_b, sizeof name_b, "%s_%s", base_b, KINDS[i]);
        char *pa = run_tool_path(dir_a, name_a), *pb = run_tool_path(dir_b, name_b);
        size_t la = 0, lb = 0;
        char *a = run_tool_read_file(pa, &la), *b = run_tool_read_file(pb, &lb);
        ck_assert_msg(a != NULL, "cannot read %s", pa);
        ck_assert_msg(b != NULL, "cannot read %s", pb);
        size_t at = 0;
        while (at < la && at < lb && a[at] == b[at])
            at++;
        ck_assert_msg(la == lb && at == la, "%s and %s differ (sizes %zu/%zu, first difference at byte %zu)", pa, pb, la,
                      lb, at);
        free(a);
        free(b);
        free(pa);
        free(pb);
    }
}

START_TEST(yaml_regenerates_golden) {
    char *out = scratch("yaml");
    run_tool_result r = gen("-o", out, "tests/golden/alltypes.yaml", NULL, NULL);
    ck_assert_msg(r.status == 0, "mantra-gen failed: %s", r.err);
    run_tool_free(&r);
    assert_same_files(out, "alltypes", "tests/golden/expected", "alltypes");
    free(out);
}
END_TEST

START_TEST(xml_spelling_regenerates_golden) {
    char *dir = scratch("xml");
    run_tool_result r = gen("--emit-xml", "tests/golden/alltypes.yaml", NULL, NULL, NULL);
    ck_assert_msg(r.status == 0, "emit-xml failed: %s", r.err);
    ck_assert(strstr(r.out, "<instrumentationManifest") != NULL);
    char *man = run_tool_path(dir, "alltypes.man");
    write_file(man, r.out, r.out_len);
    run_tool_free(&r);
    r = gen("-o", dir, man, NULL, NULL);
    ck_assert_msg(r.status == 0, "mantra-gen on the XML spelling failed: %s", r.err);
    run_tool_free(&r);
    assert_same_files(dir, "alltypes", "tests/golden/expected", "alltypes");

    /* XML -> YAML again: same model, same bytes. */
    char *dir2 = scratch("xml-yaml");
    r = gen("--emit-yaml", man, NULL, NULL, NULL);
    ck_assert_int_eq(r.status, 0);
    char *yaml = run_tool_path(dir2, "alltypes.yaml");
    write_file(yaml, r.out, r.out_len);
    run_tool_free(&r);
    r = gen("-o", dir2, yaml, NULL, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    run_tool_free(&r);
    assert_same_files(dir2, "alltypes", "tests/golden/expected", "alltypes");
    free(man);
    free(yaml);
    free(dir);
    free(dir2);
}
END_TEST

START_TEST(clretwall_xml_and_yaml_generate_the_same_bytes) {
    const char *shared = run_tool_env("MANTRA_SHARED_DIR", "../shared");
    char *man = run_tool_path(shared, "fixtures/manifests/ClrEtwAll-coreclr-2019.man");
    struct stat st;
    if (stat(man, &st) != 0) {
        const char *req = getenv("MANTRA_REQUIRE_INTEROP");
        ck_assert_msg(!(req && strcmp(req, "1") == 0), "MANTRA_REQUIRE_INTEROP=1 but %s is missing", man);
        fprintf(stderr, "SKIP: %s not found (the shared fixtures are absent)\n", man);
        free(man);
        return;
    }
    char *from_xml = scratch("clr-xml"), *from_yaml = scratch("clr-yaml");
    run_tool_result r = gen("-o", from_xml, man, NULL, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    run_tool_free(&r);
    r = gen("--emit-yaml", man, NULL, NULL, NULL);
    ck_assert_int_eq(r.status, 0);
    char *yaml = run_tool_path(from_yaml, "ClrEtwAll-coreclr-2019.yaml");
    write_file(yaml, r.out, r.out_len);
    char *first = r.out;
    size_t first_len = r.out_len;
    r.out = NULL;
    run_tool_free(&r);
    r = gen("-o", from_yaml, yaml, NULL, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    run_tool_free(&r);
    assert_same_files(from_xml, "ClrEtwAll_coreclr_2019", from_yaml, "ClrEtwAll_coreclr_2019");
    /* The YAML spelling is a fixed point: emitting it again gives the same text. */
    r = gen("--emit-yaml", yaml, NULL, NULL, NULL);
    ck_assert_int_eq(r.status, 0);
    ck_assert_uint_eq(r.out_len, first_len);
    ck_assert(memcmp(r.out, first, first_len) == 0);
    run_tool_free(&r);
    free(first);
    free(yaml);
    free(man);
    free(from_xml);
    free(from_yaml);
}
END_TEST

START_TEST(check_names_stale_and_missing_files) {
    run_tool_result r = gen("--check", "-o", "tests/golden/expected", "tests/golden/alltypes.yaml", NULL);
    ck_assert_msg(r.status == 0, "golden files are stale: %s", r.err);
    ck_assert_str_eq(r.err, "");
    run_tool_free(&r);

    char *dir = scratch("check");
    r = gen("-o", dir, "tests/golden/alltypes.yaml", NULL, NULL);
    ck_assert_int_eq(r.status, 0);
    run_tool_free(&r);
    char *stale = run_tool_path(dir, "alltypes_readers.c");
    write_file(stale, "/* edited */\n", 13);
    char *missing = run_tool_path(dir, "alltypes_defs.h");
    ck_assert_int_eq(remove(missing), 0);
    r = gen("--check", "-o", dir, "tests/golden/alltypes.yaml", NULL);
    ck_assert_int_eq(r.status, 1);
    char want[4096];
    snprintf(want, sizeof want, "mantra-gen: %s: missing", missing);
    ck_assert_msg(strstr(r.err, want) != NULL, "stderr: %s", r.err);
    snprintf(want, sizeof want, "mantra-gen: %s: stale", stale);
    ck_assert_msg(strstr(r.err, want) != NULL, "stderr: %s", r.err);
    /* Exactly two files named. */
    size_t lines = 0;
    for (const char *p = r.err; *p; p++)
        lines += *p == '\n';
    ck_assert_uint_eq(lines, 2);
    /* --check writes nothing. */
    struct stat st;
    ck_assert_int_ne(stat(missing, &st), 0);
    run_tool_free(&r);
    free(stale);
    free(missing);
    free(dir);
}
END_TEST

START_TEST(unchanged_files_are_not_rewritten) {
    char *dir = scratch("rewrite");
    run_tool_result r = gen("-o", dir, "tests/golden/alltypes.yaml", NULL, NULL);
    ck_assert_int_eq(r.status, 0);
    run_tool_free(&r);
    char *path = run_tool_path(dir, "alltypes_writers.c");
    struct stat before, after;
    ck_assert_int_eq(stat(path, &before), 0);
    r = gen("-o", dir, "tests/golden/alltypes.yaml", NULL, NULL);
    ck_assert_int_eq(r.status, 0);
    ck_assert_msg(strstr(r.out, "wrote") == NULL, "second run rewrote: %s", r.out);
    run_tool_free(&r);
    ck_assert_int_eq(stat(path, &after), 0);
    ck_assert(before.st_mtim.tv_sec == after.st_mtim.tv_sec && before.st_mtim.tv_nsec == after.st_mtim.tv_nsec);
    ck_assert(before.st_ino == after.st_ino);
    free(path);
    free(dir);
}
END_TEST

START_TEST(list_outputs_names_eight_files) {
    run_tool_result r = gen("--list-outputs", "-o", "out", "tests/golden/alltypes.yaml", NULL);
    ck_assert_int_eq(r.status, 0);
    for (size_t i = 0; i < NKINDS; i++) {
        char want[128];
        snprintf(want, sizeof want, "out/alltypes_%s\n", KINDS[i]);
        ck_assert_msg(strstr(r.out, want) != NULL, "missing %s in %s", want, r.out);
    }
    run_tool_free(&r);
}
END_TEST

START_TEST(usage_errors_exit_2) {
    run_tool_result r = gen(NULL, NULL, NULL, NULL, NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert(strstr(r.err, "mantra-gen: error: no manifest given") != NULL);
    run_tool_free(&r);
    r = gen("--no-such-option", "x.yaml", NULL, NULL, NULL);
    ck_assert_int_eq(r.status, 2);
    run_tool_free(&r);
    r = gen("--emit-yaml", "a.yaml", "b.yaml", NULL, NULL);
    ck_assert_int_eq(r.status, 2);
    run_tool_free(&r);
    r = gen("--help", NULL, NULL, NULL, NULL);
    ck_assert_int_eq(r.status, 0);
    ck_assert(strstr(r.out, "usage: mantra-gen") != NULL);
    run_tool_free(&r);
    r = gen("--version", NULL, NULL, NULL, NULL);
    ck_assert_int_eq(r.status, 0);
    ck_assert(strncmp(r.out, "mantra-gen ", 11) == 0);
    run_tool_free(&r);
    r = gen("-o", "/tmp", "tests/golden/no-such-manifest.yaml", NULL, NULL);
    ck_assert_int_eq(r.status, 1);
    ck_assert_str_eq(r.err, "tests/golden/no-such-manifest.yaml:1:1: error: cannot read manifest: no such file\n");
    run_tool_free(&r);
}
END_TEST

int main(void) {
    g_scratch = run_tool_path(run_tool_env("MANTRA_BINARY_DIR", "/tmp"), "test_golden");
    Suite *s = suite_create("golden");
    TCase *t = tcase_create("generator");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, yaml_regenerates_golden);
    tcase_add_test(t, xml_spelling_regenerates_golden);
    tcase_add_test(t, clretwall_xml_and_yaml_generate_the_same_bytes);
    tcase_add_test(t, check_names_stale_and_missing_files);
    tcase_add_test(t, unchanged_files_are_not_rewritten);
    tcase_add_test(t, list_outputs_names_eight_files);
    tcase_add_test(t, usage_errors_exit_2);
    suite_add_tcase(s, t);
    int rc = run_suite(s, CK_FORK_GETENV);
    free(g_scratch);
    return rc;
}
