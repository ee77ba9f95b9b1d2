/* ClrEtwAll.man through the run-time loader: converted at test time with `mantra-gen --emit-yaml`
 * (../shared/fixtures/manifests/ClrEtwAll-coreclr-2019.man), loaded, checked in detail, and compared
 * with the generator's own model event by event (tests/manifest/dump_events.py prints the same line
 * format as mt_describe_events()). manifest/dotnet.yaml and tests/golden/alltypes.yaml are compared
 * the same way. Without ../shared the test exits 77 (skipped) unless MANTRA_REQUIRE_INTEROP=1. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check_main.h"
#include "gen/run_tool.h"
#include "manifest/manifest_test_util.h"
#include "mantra/manifest.h"

static char g_man[4096];  /* the fixture */
static char g_yaml[4096]; /* its YAML spelling */

/* What the generator's model says, one line per event. */
static char *python_events(const char *manifest) {
    const char *argv[] = {run_tool_env("MANTRA_PYTHON", "python3"), mt_source_path("tests/manifest/dump_events.py"),
                          manifest, NULL};
    char script[4096];
    snprintf(script, sizeof script, "%s", argv[1]);
    argv[1] = script;
    run_tool_result r;
    ck_assert_int_eq(run_tool(argv, NULL, &r), 0);
    ck_assert_msg(r.status == 0, "dump_events.py %s failed: %s", manifest, r.err);
    char *out = r.out;
    r.out = NULL;
    run_tool_free(&r);
    return out;
}

/* The first differing line of two texts (for a readable failure). */
static void assert_same_lines(const char *what, const char *got, const char *want) {
    if (strcmp(got, want) == 0)
        return;
    size_t line = 1;
    const char *g = got, *w = want;
    while (*g && *g == *w) {
        if (*g == '\n') {
            line++;
            got = g + 1;
            want = w + 1;
        }
        g++;
        w++;
    }
    ck_abort_msg("%s: line %zu differs:\n C loader: %.*s\nGenerator: %.*s", what, line, (int)strcspn(got, "\n"), got,
                 (int)strcspn(want, "\n"), want);
}

START_TEST(clretwall_loads) {
    mantra_manifest *m = mt_load_file(g_yaml);
    ck_assert_uint_eq(mantra_manifest_provider_count(m), 4);
    ck_assert_uint_eq(mantra_manifest_event_count(m), 416);
    static const struct {
        const char *name, *guid;
        unsigned events, templates, maps;
    } want[] = {
        {"Microsoft-Windows-DotNETRuntime", "e13c0d23-ccbc-4e12-931b-d9cc2eee27e4", 184, 115, 26},
        {"Microsoft-Windows-DotNETRuntimeRundown", "a669021c-c450-4609-a035-5af59af4df18", 46, 22, 10},
        {"Microsoft-Windows-DotNETRuntimeStress", "cc2bcbba-16b6-4cf3-8990-d74c2e8af500", 3, 3, 0},
        {"Microsoft-Windows-DotNETRuntimePrivate", "763fd754-7086-4dfe-95eb-c01a46faf4ca", 183, 56, 4},
    };
    for (uint32_t i = 0; i < 4; i++) {
        const mantra_manifest_provider *p = mantra_manifest_provider_at(m, i);
        char g[37];
        mantra_manifest_guid_format(&p->guid, g);
        ck_assert_str_eq(p->name, want[i].name);
        ck_assert_str_eq(g, want[i].guid);
        ck_assert_uint_eq(p->event_count, want[i].events);
        ck_assert_uint_eq(p->template_count, want[i].templates);
        ck_assert_uint_eq(p->map_count, want[i].maps);
        ck_assert_ptr_eq(mantra_manifest_find_provider_by_guid(m, &p->guid), p);
    }
    const mantra_manifest_provider *rt = mantra_manifest_find_provider(m, "Microsoft-Windows-DotNETRuntime");
    const mantra_manifest_event *e = mantra_manifest_find_event(rt, 143, 2);
    ck_assert_str_eq(e->symbol, "MethodLoadVerbose_V2");
    ck_assert_uint_eq(e->keywords, 0x30);
    ck_assert_uint_eq(e->task, 9);
    ck_assert_uint_eq(e->opcode, 37);
    ck_assert_uint_eq(e->level, MANTRA_LEVEL_INFORMATIONAL);
    static const char *const names[] = {"MethodID",        "ModuleID",        "MethodStartAddress", "MethodSize",
                                        "MethodToken",     "MethodFlags",     "MethodNamespace",    "MethodName",
                                        "MethodSignature", "ClrInstanceID",   "ReJITID"};
    static const int types[] = {MANTRA_TYPE_UINT64,         MANTRA_TYPE_UINT64,
                                MANTRA_TYPE_UINT64,         MANTRA_TYPE_UINT32,
                                MANTRA_TYPE_UINT32,         MANTRA_TYPE_UINT32,
                                MANTRA_TYPE_STRING, MANTRA_TYPE_STRING,
                                MANTRA_TYPE_STRING, MANTRA_TYPE_UINT16,
                                MANTRA_TYPE_UINT64};
    ck_assert_uint_eq(e->tpl->field_count, 11);
    for (uint32_t i = 0; i < 11; i++) {
        ck_assert_str_eq(e->tpl->fields[i].name, names[i]);
        ck_assert_int_eq(e->tpl->fields[i].type, types[i]);
    }
    ck_assert_str_eq(e->tpl->fields[0].out_type, "win:HexInt64");
    ck_assert_str_eq(e->tpl->fields[5].map->name, "MethodFlagsMap");
    /* a struct array whose members have their own counts (BulkType) */
    const mantra_manifest_event *bulk = mantra_manifest_find_event(rt, 15, 0);
    ck_assert_str_eq(bulk->name, "BulkType");
    ck_assert_str_eq(mt_fields(bulk->tpl),
                     "Count:UInt32, ClrInstanceID:UInt16, Values:struct[Count]{TypeID:UInt64/win:HexInt64, "
                     "ModuleID:UInt64/win:HexInt64, TypeNameID:UInt32, Flags:UInt32=TypeFlagsMap, CorElementType:UInt8, "
                     "Name:UnicodeString, TypeParameterCount:UInt32, "
                     "TypeParameters:UInt64[TypeParameterCount]/win:HexInt64}");
    mantra_manifest_free(m);
}
END_TEST

START_TEST(clretwall_agrees_with_generator) {
    mantra_manifest *m = mt_load_file(g_yaml);
    char *c_text = mt_describe_events(m);
    char *py_text = python_events(g_yaml);
    assert_same_lines("ClrEtwAll (YAML)", c_text, py_text);
    free(py_text);
    /* the XML spelling loads into the same model in the generator */
    py_text = python_events(g_man);
    assert_same_lines("ClrEtwAll (XML)", c_text, py_text);
    free(py_text);
    free(c_text);
    mantra_manifest_free(m);
}
END_TEST

START_TEST(project_manifests_agree_with_generator) {
    static const char *const rels[] = {"manifest/dotnet.yaml", "tests/golden/alltypes.yaml"};
    for (size_t i = 0; i < 2; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s", mt_source_path(rels[i]));
        mantra_manifest *m = mt_load_file(path);
        char *c_text = mt_describe_events(m);
        char *py_text = python_events(path);
        assert_same_lines(rels[i], c_text, py_text);
        free(c_text);
        free(py_text);
        mantra_manifest_free(m);
    }
}
END_TEST

/* Converts the fixture; returns 0, or 77 (skip) / 1 (fail) when it is not there. */
static int prepare(void) {
    snprintf(g_man, sizeof g_man, "%s/fixtures/manifests/ClrEtwAll-coreclr-2019.man",
             run_tool_env("MANTRA_SHARED_DIR", "../shared"));
    struct stat st;
    if (stat(g_man, &st) != 0) {
        const char *req = getenv("MANTRA_REQUIRE_INTEROP");
        if (req != NULL && strcmp(req, "1") == 0) {
            fprintf(stderr, "FAIL: %s not found and MANTRA_REQUIRE_INTEROP=1\n", g_man);
            return 1;
        }
        printf("SKIP: %s not found (set MANTRA_REQUIRE_INTEROP=1 to make this a failure)\n", g_man);
        return 77;
    }
    char dir[2048];
    snprintf(dir, sizeof dir, "%s/tests/manifest", run_tool_env("MANTRA_BINARY_DIR", "."));
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "FAIL: cannot create %s\n", dir);
        return 1;
    }
    snprintf(g_yaml, sizeof g_yaml, "%s/ClrEtwAll.yaml", dir);
    const char *argv[] = {run_tool_env("MANTRA_PYTHON", "python3"), mt_source_path("tools/mantra-gen"), "--emit-yaml",
                          g_man, NULL};
    char gen[4096];
    snprintf(gen, sizeof gen, "%s", argv[1]);
    argv[1] = gen;
    run_tool_result r;
    if (run_tool(argv, NULL, &r) != 0 || r.status != 0) {
        fprintf(stderr, "FAIL: mantra-gen --emit-yaml %s: %s\n", g_man, r.err ? r.err : "");
        run_tool_free(&r);
        return 1;
    }
    FILE *f = fopen(g_yaml, "wb");
    int ok = f != NULL && fwrite(r.out, 1, r.out_len, f) == r.out_len;
    if (f != NULL && fclose(f) != 0)
        ok = 0;
    run_tool_free(&r);
    if (!ok) {
        fprintf(stderr, "FAIL: cannot write %s\n", g_yaml);
        return 1;
    }
    return 0;
}

int main(void) {
    int rc = prepare();
    if (rc != 0)
        return rc;
    Suite *s = suite_create("manifest_clr");
    TCase *tc = tcase_create("clr");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, clretwall_loads);
    tcase_add_test(tc, clretwall_agrees_with_generator);
    tcase_add_test(tc, project_manifests_agree_with_generator);
    suite_add_tcase(s, tc);
    return run_suite(s, CK_FORK_GETENV);
}
