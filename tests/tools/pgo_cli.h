/* pgo_cli.h - what the tests of `mantra pgo` share (test_pgo_convert.c, test_pgo_mibc.c): the tool
 * ($MANTRA_TOOL), scratch paths in $MANTRA_PGO_TEST_DIR (in the build tree) and running
 * `mantra pgo ARGS...` through run_tool (fork/exec, no shell). */
#ifndef MANTRA_TESTS_PGO_CLI_H
#define MANTRA_TESTS_PGO_CLI_H

#include <check.h>
#include <sys/stat.h>

#include "gen/run_tool.h"

/* A new path for name in the test's scratch folder (made if needed); default_dir when the
 * environment does not say. */
static inline char *pgo_cli_path(const char *default_dir, const char *name) {
    const char *dir = run_tool_env("MANTRA_PGO_TEST_DIR", default_dir);
    mkdir(dir, 0777);
    return run_tool_path(dir, name);
}

/* `mantra pgo ARGS...` (args: NULL-terminated, at most 13); the result in r. */
static inline void pgo_cli_run(run_tool_result *r, const char *const *args) {
    const char *argv[16] = {run_tool_env("MANTRA_TOOL", "build/tools/mantra"), "pgo"};
    size_t n = 2;
    for (; args[n - 2]; n++)
        argv[n] = args[n - 2];
    argv[n] = NULL;
    ck_assert_int_eq(run_tool(argv, NULL, r), 0);
}

#endif
