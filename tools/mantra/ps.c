/* mantra ps [--json] - the processes with a diagnostics endpoint this user can reach, and what
 * their ProcessInfo says (docs/cli.md; DESIGN.md "CLI contracts"). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mantra/diag_client.h"
#include "tool.h"

static const char ps_usage[] =
    "Usage: mantra ps [--json]\n"
    "\n"
    "Lists the processes that publish a diagnostics endpoint this user can reach (.NET runtimes and\n"
    "processes that embed mantra): the socket files $TMPDIR/dotnet-diagnostic-PID-KEY-socket of live\n"
    "processes (files of processes that are gone are skipped and counted on stderr), with what each\n"
    "process's ProcessInfo command says: pid, operating system, architecture, runtime version (when\n"
    "ProcessInfo2 or 3 gives one) and command line. A process that does not answer within 2 s is\n"
    "listed with its pid and the reason on stderr.\n"
    "\n"
    "  --json      a JSON list, pid ascending: {\"pid\": N, \"command_line\": \"...\", \"os\": \"...\",\n"
    "              \"arch\": \"...\", \"runtime_version\": \"...\"} (\"\" for what a process does not say)\n"
    "\n"
    "Exit status: 0 success (also when no process is found), 1 the directory cannot be read, 2 usage error.\n";

int cmd_ps(int argc, char **argv) {
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(ps_usage, stdout);
            return TOOL_OK;
        }
        if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else
            return tool_usage_error("ps", "unknown argument '%s'", argv[i]);
    }
    char err[512];
    size_t count = 0, stale = 0;
    mantra_diag_endpoint *eps = NULL;
    if (mantra_diag_list(&eps, &count, &stale, err, sizeof err) != 0) {
        fprintf(stderr, "mantra ps: %s\n", err);
        return TOOL_BAD_INPUT;
    }
    if (json)
        fputc('[', stdout);
    else
        printf("%8s  %-6s  %-6s  %-14s  %s\n", "PID", "OS", "ARCH", "RUNTIME", "COMMAND LINE");
    for (size_t i = 0; i < count; i++) {
        mantra_diag_process_info info;
        uint32_t hr = 0;
        mantra_diag_target *t = NULL;
        int rc = mantra_diag_target_connect(eps[i].path, &t, err, sizeof err);
        if (!rc)
            rc = mantra_diag_process_info_get(t, 2000, &info, &hr, err, sizeof err);
        mantra_diag_target_free(t);
        if (rc)
            fprintf(stderr, "mantra ps: process %" PRIu64 " (%s): %s\n", eps[i].pid, eps[i].path, err);
        const char *cmdline = rc ? "" : info.command_line, *os = rc ? "" : info.os, *arch = rc ? "" : info.arch;
        const char *version = rc || !info.runtime_version ? "" : info.runtime_version;
        if (json) {
            printf("%s{\"pid\":%" PRIu64 ",\"command_line\":", i ? "," : "", eps[i].pid);
            json_string(stdout, cmdline, strlen(cmdline));
            fputs(",\"os\":", stdout);
            json_string(stdout, os, strlen(os));
            fputs(",\"arch\":", stdout);
            json_string(stdout, arch, strlen(arch));
            fputs(",\"runtime_version\":", stdout);
            json_string(stdout, version, strlen(version));
            fputc('}', stdout);
        } else {
            printf("%8" PRIu64 "  %-6s  %-6s  %-14s  %s\n", eps[i].pid, rc ? "?" : os, rc ? "?" : arch,
                   version[0] ? version : "-", rc ? "(no answer)" : cmdline);
        }
        if (!rc)
            mantra_diag_process_info_free(&info);
    }
    if (json)
        fputs("]\n", stdout);
    if (stale)
        fprintf(stderr, "mantra ps: %zu socket file%s of processes that are gone skipped\n", stale,
                stale == 1 ? "" : "s");
    free(eps);
    return fflush(stdout) == 0 ? TOOL_OK : TOOL_BAD_INPUT;
}
