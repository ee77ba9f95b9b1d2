/* Helpers shared by the subcommands: opening traces, reporting errors, progress. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tool.h"

#ifdef MANTRA_TOOL_HAVE_DOTNET
#include "dotnet_registry.h"
#endif

mantra_reader *tool_reader(const char *cmd, unsigned flags) {
    mantra_reader_options o = {flags, 0};
    mantra_reader *r = mantra_reader_new(&o);
    if (r == NULL) {
        fprintf(stderr, "mantra %s: out of memory\n", cmd);
        return NULL;
    }
#ifdef MANTRA_TOOL_HAVE_DOTNET
    for (size_t i = 0; i < MANTRA_DOTNET_PROVIDER_COUNT; i++)
        mantra_reader_add_provider(r, mantra_dotnet_providers[i]);
#endif
    return r;
}

int tool_open(mantra_reader *r, const char *cmd, const char *path) {
    int rc = strcmp(path, "-") == 0 ? mantra_reader_open_fd(r, 0) : mantra_reader_open_file(r, path);
    if (rc < 0)
        tool_report(r, cmd, path);
    return rc;
}

void tool_report(const mantra_reader *r, const char *cmd, const char *path) {
    fprintf(stderr, "mantra %s: %s: %s\n", cmd, path, mantra_reader_error(r));
}

int tool_status(int rc) { return (rc >= 0 || rc == MANTRA_ETRUNCATED) ? TOOL_OK : TOOL_BAD_INPUT; }

int tool_usage_error(const char *cmd, const char *fmt, const char *arg) {
    fprintf(stderr, "mantra %s: ", cmd);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'mantra %s --help'.\n", cmd);
    return TOOL_USAGE;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void tool_progress(const mantra_reader *r, const char *cmd, int done) {
    static int tty = -1;
    static double start, last;
    static int shown;
    static unsigned calls;
    if (tty < 0) {
        tty = isatty(2);
        start = last = now();
    }
    if (!tty)
        return;
    if (done) {
        if (shown)
            fputs("\r\033[K", stderr);
        return;
    }
    if ((++calls & 4095) != 0)
        return;
    double t = now();
    if (t - start < 1.0 || t - last < 0.25)
        return;
    last = t;
    const mantra_reader_stats *s = mantra_reader_get_stats(r);
    if (s->total_bytes)
        fprintf(stderr, "\rmantra %s: %.1f of %.1f MB read (%d%%)", cmd, (double)s->bytes_read / 1e6,
                (double)s->total_bytes / 1e6, (int)(100.0 * (double)s->bytes_read / (double)s->total_bytes));
    else
        fprintf(stderr, "\rmantra %s: %.1f MB read", cmd, (double)s->bytes_read / 1e6);
    shown = 1;
}
