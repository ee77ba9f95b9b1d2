/* The published diagnostics endpoints of the processes of this user (mantra/diag_client.h): socket
 * files $TMPDIR/dotnet-diagnostic-PID-KEY-socket, as dotnet-trace ps finds them (dotnet/diagnostics,
 * src/Microsoft.Diagnostics.NETCore.Client/DiagnosticsIpc/IpcTransport.cs: the pattern
 * ^dotnet-diagnostic-(\d+)-(\d+)-socket$, the newest file of a pid by last-write time; the process
 * must be alive). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag/server-internal.h"
#include "mantra/diag_client.h"
#include "platform/platform-internal.h"

typedef struct scan {
    const char *dir;
    uint64_t only;    /* 0: every pid */
    mantra_diag_endpoint *items;
    size_t count, cap;
    int64_t *mtimes; /* the newest socket file's time, per item */
    size_t stale;
    int failed;
} scan;

/* Room for more items. 0, or -1 (s->failed) when out of memory. */
static int grow(scan *s) {
    size_t cap = s->cap ? 2 * s->cap : 16;
    mantra_diag_endpoint *items = realloc(s->items, cap * sizeof *items);
    if (items)
        s->items = items;
    int64_t *mtimes = realloc(s->mtimes, cap * sizeof *mtimes);
    if (mtimes)
        s->mtimes = mtimes;
    if (!items || !mtimes) {
        s->failed = 1;
        return -1;
    }
    s->cap = cap;
    return 0;
}

/* The pid of a name "dotnet-diagnostic-PID-KEY-socket" (both all digits), or 0. */
static uint64_t name_pid(const char *name) {
    static const char PREFIX[] = "dotnet-diagnostic-", SUFFIX[] = "-socket";
    size_t n = strlen(name), pre = sizeof PREFIX - 1, suf = sizeof SUFFIX - 1;
    if (n <= pre + suf || strncmp(name, PREFIX, pre) != 0 || strcmp(name + n - suf, SUFFIX) != 0)
        return 0;
    const char *p = name + pre, *end = name + n - suf;
    uint64_t pid = 0;
    size_t digits = 0;
    for (; p < end && *p >= '0' && *p <= '9'; p++, digits++) {
        if (pid > UINT64_MAX / 10 - 1)
            return 0;
        pid = pid * 10 + (uint64_t)(*p - '0');
    }
    if (digits == 0 || p >= end || *p != '-' || p + 1 >= end)
        return 0;
    for (p++; p < end; p++)
        if (*p < '0' || *p > '9')
            return 0;
    return pid;
}

static int visit(void *ctx, const char *name) {
    scan *s = ctx;
    uint64_t pid = name_pid(name);
    if (pid == 0 || (s->only && pid != s->only))
        return 0;
    char path[256];
    if (snprintf(path, sizeof path, "%s/%s", s->dir, name) >= (int)sizeof path)
        return 0;
    int64_t mtime = mantra_pal_file_mtime_ns(path);
    if (mtime < 0)
        return 0;
    if (s->count == s->cap && grow(s) != 0)
        return 1;
    if (!mantra_pal_process_alive(pid)) {
        s->stale++;
        return 0;
    }
    for (size_t i = 0; i < s->count; i++)
        if (s->items[i].pid == pid) {
            if (mtime >= s->mtimes[i]) {
                s->mtimes[i] = mtime;
                memcpy(s->items[i].path, path, sizeof path);
            }
            return 0;
        }
    s->items[s->count].pid = pid;
    s->mtimes[s->count] = mtime;
    memcpy(s->items[s->count].path, path, sizeof path);
    s->count++;
    return 0;
}

static int by_pid(const void *a, const void *b) {
    uint64_t x = ((const mantra_diag_endpoint *)a)->pid, y = ((const mantra_diag_endpoint *)b)->pid;
    return (x > y) - (x < y);
}

static int run_scan(scan *s, char *err, size_t errlen) {
    if (!mantra_pal_sockets_available()) {
        snprintf(err, errlen, "no sockets on this host");
        return MANTRA_EUNSUPPORTED;
    }
    s->dir = mantra_pal_tmpdir();
    int rc = mantra_pal_list_dir(s->dir, visit, s);
    if (s->failed) {
        snprintf(err, errlen, "out of memory");
        return MANTRA_ENOMEM;
    }
    if (rc < 0) {
        snprintf(err, errlen, "cannot read the directory %s", s->dir);
        return MANTRA_EIO;
    }
    if (s->count > 1) /* qsort of NULL, 0 is undefined behaviour (UBSan in test-asan found it) */
        qsort(s->items, s->count, sizeof *s->items, by_pid);
    return 0;
}

int mantra_diag_list(mantra_diag_endpoint **out, size_t *count, size_t *stale, char *err, size_t errlen) {
    scan s = {0};
    int rc = run_scan(&s, err, errlen);
    free(s.mtimes);
    if (rc) {
        free(s.items);
        return rc;
    }
    *out = s.items;
    *count = s.count;
    if (stale)
        *stale = s.stale;
    return 0;
}

int mantra_diag_endpoint_of(uint64_t pid, char *path, size_t size, char *err, size_t errlen) {
    scan s = {0};
    s.only = pid;
    int rc = run_scan(&s, err, errlen);
    if (!rc && s.count == 0) {
        if (!mantra_pal_process_alive(pid))
            snprintf(err, errlen, "no such process: %llu", (unsigned long long)pid);
        else
            snprintf(err, errlen, "process %llu has no diagnostics endpoint in %s (dotnet-diagnostic-%llu-*-socket)",
                     (unsigned long long)pid, s.dir, (unsigned long long)pid);
        rc = MANTRA_ENOENT;
    }
    if (!rc && snprintf(path, size, "%s", s.items[0].path) >= (int)size) {
        snprintf(err, errlen, "the endpoint path does not fit");
        rc = MANTRA_ERANGE;
    }
    free(s.items);
    free(s.mtimes);
    return rc;
}
