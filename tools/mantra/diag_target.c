/* What `mantra collect` and `mantra counters` share (diag_target.h): the process they talk to, from
 * -p PID, -n NAME or --diagnostic-port ADDRESS[,listen|,connect], the signal that stops them, and
 * durations in dotnet-trace's spelling. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "diag_target.h"
#include "tool.h"

volatile sig_atomic_t tool_stop_signal;
static void on_signal(int sig) { tool_stop_signal = sig; }
static void (*old_int)(int), (*old_term)(int);

void tool_signals_catch(void) {
    tool_stop_signal = 0;
    old_int = signal(SIGINT, on_signal);
    old_term = signal(SIGTERM, on_signal);
}

void tool_signals_restore(void) {
    signal(SIGINT, old_int);
    signal(SIGTERM, old_term);
}

int tool_options(const char *cmd, const char *usage, const tool_option *opts, int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage, stdout);
            return -1;
        }
        const tool_option *o = opts;
        while (o->long_name && strcmp(a, o->long_name) != 0 && !(o->short_name && strcmp(a, o->short_name) == 0))
            o++;
        if (!o->long_name)
            return tool_usage_error(cmd, "unknown argument '%s'", a);
        if (i + 1 >= argc)
            return tool_usage_error(cmd, "%s needs a value", a);
        *o->value = argv[++i];
    }
    return TOOL_OK;
}

double tool_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double tool_parse_duration(const char *s) {
    unsigned d, h, m;
    double sec;
    char tail;
    if (sscanf(s, "%u:%u:%u:%lf%c", &d, &h, &m, &sec, &tail) == 4 && h < 24 && m < 60 && sec >= 0 && sec < 60)
        return d * 86400.0 + h * 3600.0 + m * 60.0 + sec;
    if (strchr(s, ':'))
        return -1;
    char *end;
    double v = strtod(s, &end);
    return (end != s && !*end && v > 0 && v < 1e9) ? v : -1;
}

/* The file name of a command line's first word, without directories. */
static void first_word_name(const char *cmdline, char *out, size_t size) {
    const char *end = cmdline;
    while (*end && *end != ' ')
        end++;
    const char *start = end;
    while (start > cmdline && start[-1] != '/')
        start--;
    snprintf(out, size, "%.*s", (int)(end - start), start);
}

/* The endpoint of the one process called name (its command's file name or its entry assembly). */
static int endpoint_by_name(const char *cmd, const char *name, char *path, size_t size, uint64_t *pid) {
    char err[512];
    size_t count = 0;
    mantra_diag_endpoint *eps = NULL;
    if (mantra_diag_list(&eps, &count, NULL, err, sizeof err) != 0) {
        fprintf(stderr, "mantra %s: %s\n", cmd, err);
        return -1;
    }
    size_t matches = 0;
    char list[256] = "";
    for (size_t i = 0; i < count; i++) {
        mantra_diag_process_info info;
        mantra_diag_target *t = NULL;
        int rc = mantra_diag_target_connect(eps[i].path, &t, err, sizeof err);
        if (!rc)
            rc = mantra_diag_process_info_get(t, 2000, &info, NULL, err, sizeof err);
        mantra_diag_target_free(t);
        if (rc)
            continue;
        char word[256];
        first_word_name(info.command_line, word, sizeof word);
        if (strcmp(word, name) == 0 || (info.entrypoint && strcmp(info.entrypoint, name) == 0)) {
            if (matches++ == 0) {
                snprintf(path, size, "%s", eps[i].path);
                *pid = eps[i].pid;
            }
            size_t len = strlen(list);
            snprintf(list + len, sizeof list - len, "%s%" PRIu64, len ? ", " : "", eps[i].pid);
        }
        mantra_diag_process_info_free(&info);
    }
    free(eps);
    if (matches == 1)
        return 0;
    if (matches == 0)
        fprintf(stderr, "mantra %s: no process called '%s' has a diagnostics endpoint (mantra ps lists them)\n", cmd,
                name);
    else
        fprintf(stderr, "mantra %s: %zu processes are called '%s' (%s): choose one with -p\n", cmd, matches, name,
                list);
    return -1;
}

int tool_diag_target(const char *cmd, const char *pid_arg, const char *name, const char *port, mantra_diag_target **t,
                     uint64_t *pid, char *address, size_t size) {
    char err[512];
    *t = NULL;
    *pid = 0;
    if ((pid_arg != NULL) + (name != NULL) + (port != NULL) != 1)
        return tool_usage_error(cmd, "%s", "give exactly one of -p PID, -n NAME and --diagnostic-port ADDRESS");
    if (pid_arg) {
        char *end;
        unsigned long long v = strtoull(pid_arg, &end, 10);
        if (end == pid_arg || *end || v == 0)
            return tool_usage_error(cmd, "-p '%s': want a process id", pid_arg);
        *pid = v;
        if (mantra_diag_endpoint_of(*pid, address, size, err, sizeof err) != 0) {
            fprintf(stderr, "mantra %s: %s\n", cmd, err);
            return TOOL_BAD_INPUT;
        }
    } else if (name && endpoint_by_name(cmd, name, address, size, pid) != 0) {
        return TOOL_BAD_INPUT;
    }
    int rc;
    if (port) {
        /* ADDRESS[,listen] (the default, as dotnet-trace's) or ADDRESS,connect */
        size_t len = strlen(port);
        int connect = len > 8 && strcmp(port + len - 8, ",connect") == 0;
        int listen = len > 7 && strcmp(port + len - 7, ",listen") == 0;
        snprintf(address, size, "%.*s", (int)(len - (connect ? 8 : listen ? 7 : 0)), port);
        rc = connect ? mantra_diag_target_connect(address, t, err, sizeof err)
                     : mantra_diag_target_listen(address, t, err, sizeof err);
        if (!rc && !connect) {
            fprintf(stderr, "mantra %s: waiting for a process to connect to %s (start it with "
                            "DOTNET_DiagnosticPorts=%s or MANTRA_DiagnosticPorts=%s; Ctrl-C gives up)\n",
                    cmd, address, address, address);
            do
                rc = mantra_diag_target_wait(*t, 250, pid, err, sizeof err);
            while (rc == MANTRA_ETIMEDOUT && !tool_stop_signal);
            if (!rc)
                fprintf(stderr, "mantra %s: process %" PRIu64 " connected\n", cmd, *pid);
            else if (tool_stop_signal)
                snprintf(err, sizeof err, "interrupted before a process connected");
        }
    } else {
        rc = mantra_diag_target_connect(address, t, err, sizeof err);
    }
    if (rc) {
        fprintf(stderr, "mantra %s: %s: %s\n", cmd, address, err);
        mantra_diag_target_free(*t);
        *t = NULL;
        return TOOL_BAD_INPUT;
    }
    return TOOL_OK;
}
