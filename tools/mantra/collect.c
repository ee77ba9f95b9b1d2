/* mantra collect -p PID | -n NAME [--providers SPEC] [--profile NAME[,NAME]] [--duration T]
 * [-o FILE] [--format nettrace] [--buffersize MB] - a tracing session of another process over the
 * diagnostics IPC protocol, streamed into a file (docs/cli.md; DESIGN.md "CLI contracts"). What is
 * sent is what dotnet-trace 10 sends (observed with a recording endpoint: CollectTracing2 with the
 * default rundown, CollectTracing4 with rundown keyword 1 for gc-collect and CollectTracing2
 * without rundown when the process refuses it; ResumeRuntime on a connection of its own; StopTracing
 * at the end); the profiles are dotnet-trace 10's (`dotnet-trace list-profiles`). */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diag_target.h"
#include "mantra/diag_client.h"
#include "tool.h"

static const char collect_usage[] =
    "Usage: mantra collect (-p PID | -n NAME | --diagnostic-port ADDRESS) [--providers SPEC]\n"
    "                      [--profile NAME[,NAME]...] [--duration T] [-o FILE] [--format nettrace]\n"
    "                      [--buffersize MB]\n"
    "\n"
    "Starts a tracing session in a running process that serves the diagnostics IPC protocol (a .NET\n"
    "runtime, or a process that embeds mantra) and streams its nettrace into FILE while it runs: until\n"
    "Ctrl-C (SIGINT) or SIGTERM, --duration, or the process's exit. Then it stops the session, so the\n"
    "process writes its rundown and the end of the stream, and the file is a complete trace; when\n"
    "the process dies first, the file holds every byte it sent (every complete block). On a terminal,\n"
    "stderr shows the bytes written so far.\n"
    "\n"
    "  -p, --process-id PID       the process (its socket file $TMPDIR/dotnet-diagnostic-PID-*-socket)\n"
    "  -n, --name NAME            the one process whose command's file name (or entry assembly) is NAME\n"
    "  --diagnostic-port ADDRESS[,listen|,connect]\n"
    "                             listen (the default): make ADDRESS (a Unix socket path, or TCP\n"
    "                             host:port) and wait for a process started with\n"
    "                             DOTNET_DiagnosticPorts=ADDRESS (or MANTRA_DiagnosticPorts) to connect;\n"
    "                             the session starts before it is resumed, so the trace holds its first\n"
    "                             events. connect: ADDRESS is a process's listening endpoint\n"
    "  --providers SPEC           Name[:0xKEYWORDS[:LEVEL[:ARGS]]],... (dotnet-trace's syntax; keywords 0\n"
    "                             and level 4 by default); they win over a profile's for the same name\n"
    "  --profile NAME[,NAME]      dotnet-trace 10's profiles:\n"
    "                               dotnet-common               Microsoft-Windows-DotNETRuntime:0x100003801D:4\n"
    "                               dotnet-sampled-thread-time  Microsoft-DotNETCore-SampleProfiler:0xF00000000000:4\n"
    "                               gc-verbose                  Microsoft-Windows-DotNETRuntime:0x8003:5\n"
    "                               gc-collect                  Microsoft-Windows-DotNETRuntime:0x1:4 and\n"
    "                                                           ...Private:0x1:4, rundown keyword 0x1 only\n"
    "                               database                    TplEventSource:0x80:4 and DiagnosticSource:0x3:5\n"
    "                                                           with ADO.NET and EF Core command filters\n"
    "                             without --providers or --profile: dotnet-common,dotnet-sampled-thread-time\n"
    "  --duration T               seconds (5, 2.5) or dd:hh:mm:ss\n"
    "  -o, --output FILE          the trace (default trace.nettrace; an existing file is replaced)\n"
    "  --format nettrace          the only format (what the process streams)\n"
    "  --buffersize MB            the session's buffer in the process (default 256)\n"
    "\n"
    "Exit status: 0 the trace is complete, or the process exited and the file holds what it sent;\n"
    "1 no such process, no endpoint, the connection failed, the process refused the command (its\n"
    "HRESULT by name), or the file could not be written; 2 usage error.\n";

#define MAX_PROVIDERS 64
#define IO_TIMEOUT_MS 10000u
#define STOP_WAIT_MS 30000u /* for the rundown and the end of the stream after StopTracing */

/* The ADO.NET and EF Core filter of dotnet-trace 10's database profile (dotnet/diagnostics,
 * src/Tools/dotnet-trace/CommandLine/Profiles, as sent: one FilterAndPayloadSpecs value, CR LF
 * between the specs). */
#define DB_SPECS                                                                                                \
    "SqlClientDiagnosticListener/System.Data.SqlClient.WriteCommandBefore@Activity1Start:-Command;Command."      \
    "CommandText;ConnectionId;Operation;Command.Connection.ServerVersion;Command.CommandTimeout;Command."       \
    "CommandType;Command.Connection.ConnectionString;Command.Connection.Database;Command.Connection."           \
    "DataSource;Command.Connection.PacketSize\r\n"                                                              \
    "SqlClientDiagnosticListener/System.Data.SqlClient.WriteCommandAfter@Activity1Stop:\r\n"                     \
    "Microsoft.EntityFrameworkCore/Microsoft.EntityFrameworkCore.Database.Command.CommandExecuting@"            \
    "Activity2Start:-Command.CommandText;Command;ConnectionId;IsAsync;Command.Connection.ClientConnectionId;"   \
    "Command.Connection.ServerVersion;Command.CommandTimeout;Command.CommandType;Command.Connection."          \
    "ConnectionString;Command.Connection.Database;Command.Connection.DataSource;Command.Connection."           \
    "PacketSize\r\n"                                                                                            \
    "Microsoft.EntityFrameworkCore/Microsoft.EntityFrameworkCore.Database.Command.CommandExecuted@"             \
    "Activity2Stop:"

typedef struct profile_provider {
    const char *name;
    uint64_t keywords;
    uint32_t level;
    const char *args;
} profile_provider;

typedef struct profile {
    const char *name;
    profile_provider providers[2];
    uint64_t rundown; /* MANTRA_DIAG_RUNDOWN_DEFAULT, or the profile's own */
} profile;

static const profile PROFILES[] = {
    {"dotnet-common", {{"Microsoft-Windows-DotNETRuntime", UINT64_C(0x100003801D), 4, NULL}}, MANTRA_DIAG_RUNDOWN_DEFAULT},
    {"dotnet-sampled-thread-time", {{"Microsoft-DotNETCore-SampleProfiler", UINT64_C(0xF00000000000), 4, NULL}},
     MANTRA_DIAG_RUNDOWN_DEFAULT},
    {"gc-verbose", {{"Microsoft-Windows-DotNETRuntime", UINT64_C(0x8003), 5, NULL}}, MANTRA_DIAG_RUNDOWN_DEFAULT},
    {"gc-collect",
     {{"Microsoft-Windows-DotNETRuntime", 1, 4, NULL}, {"Microsoft-Windows-DotNETRuntimePrivate", 1, 4, NULL}},
     1},
    {"database",
     {{"System.Threading.Tasks.TplEventSource", 0x80, 4, NULL},
      {"Microsoft-Diagnostics-DiagnosticSource", 0x3, 5, "FilterAndPayloadSpecs=\"" DB_SPECS "\""}},
     MANTRA_DIAG_RUNDOWN_DEFAULT},
};
#define PROFILE_COUNT (sizeof PROFILES / sizeof PROFILES[0])

/* Adds a profile's providers that --providers (or an earlier profile) did not name. 0, or -1 when
 * there are too many. */
static int add_profile(const profile *p, mantra_provider_spec *specs, size_t *n) {
    for (size_t k = 0; k < 2 && p->providers[k].name; k++) {
        const profile_provider *pp = &p->providers[k];
        int named = 0;
        for (size_t i = 0; i < *n && !named; i++)
            named = strcmp(specs[i].name, pp->name) == 0;
        if (named)
            continue;
        if (*n == MAX_PROVIDERS)
            return -1;
        mantra_provider_spec *s = &specs[(*n)++];
        memset(s, 0, sizeof *s);
        snprintf(s->name, sizeof s->name, "%s", pp->name);
        s->keywords = pp->keywords;
        s->level = pp->level;
        if (pp->args)
            snprintf(s->args, sizeof s->args, "%s", pp->args);
    }
    return 0;
}

int cmd_collect(int argc, char **argv) {
    const char *pid_arg = NULL, *name = NULL, *port = NULL, *providers_arg = NULL, *profiles_arg = NULL;
    const char *output = "trace.nettrace", *duration_arg = NULL, *format = "nettrace", *buffer_arg = "256";
    const tool_option opts[] = {{"--process-id", "-p", &pid_arg},  {"--name", "-n", &name},
                                {"--diagnostic-port", NULL, &port}, {"--providers", NULL, &providers_arg},
                                {"--profile", NULL, &profiles_arg}, {"--output", "-o", &output},
                                {"--duration", NULL, &duration_arg}, {"--format", NULL, &format},
                                {"--buffersize", NULL, &buffer_arg}, {NULL, NULL, NULL}};
    int status = tool_options("collect", collect_usage, opts, argc, argv);
    if (status != TOOL_OK)
        return status < 0 ? TOOL_OK : status;
    double duration = 0;
    if (duration_arg && (duration = tool_parse_duration(duration_arg)) < 0)
        return tool_usage_error("collect", "--duration '%s': want seconds (5, 2.5) or dd:hh:mm:ss", duration_arg);
    if (strcmp(format, "nettrace") != 0 && strcmp(format, "NetTrace") != 0)
        return tool_usage_error("collect", "--format '%s': the only format is nettrace", format);
    char *end;
    unsigned long buffer_mb = strtoul(buffer_arg, &end, 10);
    if (end == buffer_arg || *end || buffer_mb == 0 || buffer_mb > 4096)
        return tool_usage_error("collect", "--buffersize '%s': want 1 to 4096 (MB)", buffer_arg);
    if ((pid_arg != NULL) + (name != NULL) + (port != NULL) != 1) /* before the providers are looked at */
        return tool_usage_error("collect", "%s", "give exactly one of -p PID, -n NAME and --diagnostic-port ADDRESS");

    mantra_provider_spec *specs = calloc(MAX_PROVIDERS, sizeof *specs);
    if (!specs) {
        fprintf(stderr, "mantra collect: out of memory\n");
        return TOOL_BAD_INPUT;
    }
    size_t n = 0, col = 0;
    if (providers_arg && mantra_provider_spec_parse(providers_arg, specs, MAX_PROVIDERS, &n, &col) != 0) {
        fprintf(stderr, "mantra collect: --providers:%zu: %s\nTry 'mantra collect --help'.\n", col,
                mantra_session_last_error());
        free(specs);
        return TOOL_USAGE;
    }
    size_t explicit_count = n;
    uint64_t rundown = MANTRA_DIAG_RUNDOWN_DEFAULT;
    const char *plist = profiles_arg ? profiles_arg : (providers_arg ? "" : "dotnet-common,dotnet-sampled-thread-time");
    size_t nprofiles = 0;
    for (const char *p = plist; *p;) {
        size_t len = strcspn(p, ",");
        const profile *found = NULL;
        for (size_t k = 0; k < PROFILE_COUNT && !found; k++)
            if (strlen(PROFILES[k].name) == len && strncmp(PROFILES[k].name, p, len) == 0)
                found = &PROFILES[k];
        if (!found) {
            fprintf(stderr, "mantra collect: --profile: unknown profile '%.*s' (dotnet-common, dotnet-sampled-thread-time, "
                            "gc-verbose, gc-collect, database)\nTry 'mantra collect --help'.\n", (int)len, p);
            free(specs);
            return TOOL_USAGE;
        }
        if (add_profile(found, specs, &n) != 0) {
            free(specs);
            return tool_usage_error("collect", "%s", "more than 64 providers");
        }
        rundown = found->rundown;
        nprofiles++;
        p += len;
        if (*p == ',')
            p++;
    }
    if (n == 0) {
        free(specs);
        return tool_usage_error("collect", "%s", "no providers: give --providers or --profile");
    }
    if (nprofiles != 1 || explicit_count) /* a profile's own rundown keywords only when it is alone */
        rundown = MANTRA_DIAG_RUNDOWN_DEFAULT;

    char address[512], err[512];
    uint64_t pid = 0;
    tool_signals_catch();
    mantra_diag_target *t = NULL;
    status = tool_diag_target("collect", pid_arg, name, port, &t, &pid, address, sizeof address);
    if (status != TOOL_OK) {
        free(specs);
        tool_signals_restore();
        return status;
    }
    mantra_diag_collect_request req = {specs, n, (uint32_t)buffer_mb, rundown, 1};
    mantra_diag_session *s = NULL;
    uint32_t hr = 0;
    int rc = mantra_diag_collect_start(t, &req, IO_TIMEOUT_MS, &s, &hr, err, sizeof err);
    if (rc == MANTRA_ESTATE && hr == MANTRA_DIAG_UNKNOWN_COMMAND && rundown != MANTRA_DIAG_RUNDOWN_DEFAULT) {
        req.rundown_keywords = 0; /* as dotnet-trace: CollectTracing2 without rundown */
        rc = mantra_diag_collect_start(t, &req, IO_TIMEOUT_MS, &s, &hr, err, sizeof err);
    }
    free(specs);
    if (rc) {
        fprintf(stderr, "mantra collect: %s: %s\n", address, err);
        mantra_diag_target_free(t);
        tool_signals_restore();
        return TOOL_BAD_INPUT;
    }
    uint64_t id = mantra_diag_session_id(s);
    FILE *out = fopen(output, "wb");
    if (!out) {
        fprintf(stderr, "mantra collect: %s: cannot write the trace\n", output);
        (void)mantra_diag_session_request_stop(s, t, IO_TIMEOUT_MS, err, sizeof err);
        mantra_diag_session_close(s);
        mantra_diag_target_free(t);
        tool_signals_restore();
        return TOOL_BAD_INPUT;
    }
    if (mantra_diag_resume(t, IO_TIMEOUT_MS, &hr, err, sizeof err) != 0)
        fprintf(stderr, "mantra collect: ResumeRuntime: %s (collecting anyway)\n", err);
    int tty = isatty(2);
    double start = tool_now_s(), last_shown = 0;
    uint64_t bytes = 0;
    int stopping = 0, ended = 0, failed = 0, write_failed = 0;
    double stop_deadline = 0;
    static uint8_t buf[1 << 16];
    if (tty)
        fprintf(stderr, "mantra collect: process %" PRIu64 ", session %" PRIu64 " -> %s (Ctrl-C stops)\n", pid, id,
                output);
    while (!ended && !failed) {
        if (!stopping && (tool_stop_signal || (duration > 0 && tool_now_s() - start >= duration))) {
            stopping = 1;
            stop_deadline = tool_now_s() + STOP_WAIT_MS / 1000.0;
            if (mantra_diag_session_request_stop(s, t, IO_TIMEOUT_MS, err, sizeof err) != 0) {
                fprintf(stderr, "mantra collect: StopTracing: %s\n", err);
                break;
            }
        }
        if (stopping && tool_now_s() > stop_deadline) {
            fprintf(stderr, "mantra collect: the stream did not end within %u s of StopTracing\n", STOP_WAIT_MS / 1000);
            break;
        }
        int64_t k = mantra_diag_session_read(s, buf, sizeof buf, 200, err, sizeof err);
        if (k > 0) {
            if (fwrite(buf, 1, (size_t)k, out) != (size_t)k || fflush(out) != 0) {
                write_failed = 1;
                break;
            }
            bytes += (uint64_t)k;
        } else if (k == 0) {
            ended = 1;
        } else if (k != MANTRA_ETIMEDOUT) {
            fprintf(stderr, "mantra collect: reading the stream: %s\n", err);
            failed = 1;
        }
        if (tty && tool_now_s() - last_shown >= 0.5) {
            last_shown = tool_now_s();
            fprintf(stderr, "\r  %.1f s, %" PRIu64 " bytes%s", last_shown - start, bytes, stopping ? ", stopping" : "");
        }
    }
    tool_signals_restore();
    if (tty)
        fputc('\n', stderr);
    int stop_state = mantra_diag_session_stop_state(s, &hr);
    if (stop_state == MANTRA_ESTATE) {
        const char *hr_name = mantra_diag_hresult_name(hr);
        fprintf(stderr, "mantra collect: StopTracing refused: 0x%08X %s\n", hr, hr_name ? hr_name : "");
    } else if (stop_state < 0) {
        fprintf(stderr, "mantra collect: StopTracing: no readable answer\n");
    }
    if (write_failed && !stopping) /* the process's session must not outlive this run */
        (void)mantra_diag_session_request_stop(s, t, IO_TIMEOUT_MS, err, sizeof err);
    mantra_diag_session_close(s);
    mantra_diag_target_free(t);
    if (fclose(out) != 0 || write_failed) {
        fprintf(stderr, "mantra collect: %s: cannot write the trace\n", output);
        return TOOL_BAD_INPUT;
    }
    if (ended && !stopping)
        fprintf(stderr, "mantra collect: the process ended the stream (it exited or stopped the session)\n");
    fprintf(stderr, "mantra collect: %s: %" PRIu64 " bytes in %.1f s\n", output, bytes, tool_now_s() - start);
    return ended ? TOOL_OK : TOOL_BAD_INPUT;
}
