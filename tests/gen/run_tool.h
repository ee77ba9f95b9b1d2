/* Runs a tool without a shell and captures what it prints (test helper for tests/gen). */
#ifndef MANTRA_TESTS_GEN_RUN_TOOL_H
#define MANTRA_TESTS_GEN_RUN_TOOL_H

#include <stddef.h>

typedef struct run_tool_result {
    char *out;          /* everything written to stdout, NUL-terminated */
    size_t out_len;
    char *err;          /* everything written to stderr, NUL-terminated */
    size_t err_len;
    int status;         /* exit status; 128 + signal number when killed; -1 when it could not run */
} run_tool_result;

/* Runs argv[0] (a path, or a name looked up in PATH) with argv (NULL-terminated) in directory cwd
 * (NULL: the current one), stdin from /dev/null. Returns 0 when the tool ran (whatever its exit
 * status), -1 on a failure to start it (the reason is in r->err). Free r with run_tool_free. */
int run_tool(const char *const argv[], const char *cwd, run_tool_result *r);

void run_tool_free(run_tool_result *r);

/* Reads a whole file into a NUL-terminated buffer (*len bytes without the NUL); NULL on error. */
char *run_tool_read_file(const char *path, size_t *len);

/* The names in directory dir that end in one of suffixes (a NULL-terminated list), sorted with
 * strcmp; *n receives their number. NULL when the directory cannot be read. Free with
 * run_tool_free_list. */
char **run_tool_list_dir(const char *dir, const char *const suffixes[], size_t *n);

void run_tool_free_list(char **names, size_t n);

/* Joins a directory and a name with '/' into a new string (abort on out of memory). */
char *run_tool_path(const char *dir, const char *name);

/* getenv() with a fallback for unset or empty variables. */
const char *run_tool_env(const char *name, const char *fallback);

#endif
