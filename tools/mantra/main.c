/* mantra - command-line tools over nettrace traces. One subcommand per file. */
#include <stdio.h>
#include <string.h>

#include "emit_cmd.h"
#include "tool.h"

static const char usage[] =
    "Usage: mantra COMMAND [OPTIONS] ...\n"
    "\n"
    "Commands:\n"
    "  dump [--json] [--sorted] [--manifest FILE]... TRACE   print every event of a trace\n"
    "  stats [--json] [--manifest FILE]... TRACE            counts of a trace (events, metadata, stacks, ...)\n"
    "  emit [--threads N] [--events M] [--trace FILE] ...   write Mantra-Demo events through sessions\n"
    "  run PROGRAM|IMAGE [--trace FILE] [--entry METHOD]   assemble and run an interpreter program (or image)\n"
    "  pgo INPUT... -o PROFILE [--format text|json|mibc]   traces' and profiles' PGO data -> profile\n"
    "  precompile PROGRAM --profile PROFILE -o IMAGE       a program laid out hot/cold from its profile\n"
    "  image [--json] FILE                                 a precompiled image's methods: hot and cold parts\n"
    "  symbolize TRACE [--json] [ADDRESS@TIME...]          addresses -> methods, as loaded at that time\n"
    "  report TRACE [--top N] [--weight samples|time]      the methods the samples were in\n"
    "  export TRACE --format speedscope|chrome -o FILE     the samples as a flame graph\n"
#ifdef MANTRA_TOOL_HAVE_DIAG_CLIENT
    "  ps [--json]                                         processes with a diagnostics endpoint\n"
    "  collect -p PID [--providers SPEC] [--profile NAME]  trace another process over the diagnostics IPC\n"
    "  counters -p PID [--counters LIST]                   another process's live EventCounters\n"
#endif
    "\n"
    "Options:\n"
    "  --help      show this help (also: mantra COMMAND --help)\n"
    "  --version   show the version\n"
    "\n"
    "Exit status: 0 success, 1 bad input, 2 usage error.\n";

int main(int argc, char **argv) {
    if (argc < 2) {
        fputs(usage, stderr);
        return TOOL_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        fputs(usage, stdout);
        return TOOL_OK;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("mantra %s\n", MANTRA_VERSION_STRING);
        return TOOL_OK;
    }
    if (strcmp(cmd, "dump") == 0)
        return cmd_dump(argc - 1, argv + 1);
    if (strcmp(cmd, "stats") == 0)
        return cmd_stats(argc - 1, argv + 1);
    if (strcmp(cmd, "emit") == 0)
        return cmd_emit(argc - 1, argv + 1);
    if (strcmp(cmd, "run") == 0)
        return cmd_run(argc - 1, argv + 1);
    if (strcmp(cmd, "pgo") == 0)
        return cmd_pgo(argc - 1, argv + 1);
    if (strcmp(cmd, "precompile") == 0)
        return cmd_precompile(argc - 1, argv + 1);
    if (strcmp(cmd, "image") == 0)
        return cmd_image(argc - 1, argv + 1);
    if (strcmp(cmd, "symbolize") == 0)
        return cmd_symbolize(argc - 1, argv + 1);
    if (strcmp(cmd, "report") == 0)
        return cmd_report(argc - 1, argv + 1);
    if (strcmp(cmd, "export") == 0)
        return cmd_export(argc - 1, argv + 1);
#ifdef MANTRA_TOOL_HAVE_DIAG_CLIENT
    if (strcmp(cmd, "ps") == 0)
        return cmd_ps(argc - 1, argv + 1);
    if (strcmp(cmd, "collect") == 0)
        return cmd_collect(argc - 1, argv + 1);
    if (strcmp(cmd, "counters") == 0)
        return cmd_counters(argc - 1, argv + 1);
#endif
    fprintf(stderr, "mantra: unknown command '%s'\nTry 'mantra --help'.\n", cmd);
    return TOOL_USAGE;
}
