/* pgo_collect.c - in-process PGO collections (dotnet_pgo.h): a file session with the
 * JitInstrumentationData keyword stopped when its window ends (mantra_session_stop_after: by id,
 * so a timer of an earlier collection never stops a later one), and the request flag a signal
 * handler sets, picked up by a poll or a mantra_pump job. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "dotnet_pgo-internal.h"
#include "mantra/pump.h"

static int env_on(const char *name) {
    const char *v = getenv(name);
    return v != NULL && v[0] != '\0' && strcmp(v, "0") != 0;
}

int mantra_pgo_collect_ex(const char *path, uint32_t seconds, unsigned flags, mantra_session_id *id) {
    if (path == NULL || path[0] == '\0')
        return MANTRA_EINVAL;
    int rc = pgo_flush_ensure();
    if (rc < 0)
        return rc;
    if (seconds == 0)
        seconds = MANTRA_PGO_COLLECT_DEFAULT_SECONDS;
    if (env_on("MANTRA_PGOCollectReset"))
        flags |= MANTRA_PGO_FLUSH_DELTAS;
    mantra_session_config c;
    mantra_session_config_init(&c);
    c.providers = MANTRA_PGO_COLLECT_PROVIDERS;
    c.output = MANTRA_SESSION_OUTPUT_FILE;
    c.path = path;
    mantra_session_id sid = 0;
    rc = mantra_session_start(&sid, &c);
    if (rc < 0)
        return rc;
    rc = pgo_flush_set_session_flags(sid, flags);
    if (rc == 0)
        rc = mantra_session_stop_after(sid, seconds * 1000u);
    if (rc != 0) {
        (void)mantra_session_stop(sid);
        return rc;
    }
    if (id != NULL)
        *id = sid;
    return 0;
}

int mantra_pgo_collect(const char *path, uint32_t seconds) { return mantra_pgo_collect_ex(path, seconds, 0, NULL); }

/* lock-free (atomic_int is on every target mantra builds for), so async-signal-safe (C11 7.14.1.1) */
static atomic_int g_requested;

void mantra_pgo_collect_request(void) { atomic_store(&g_requested, 1); }

/* The number of the collections polled so far in the process ("{n}" of the path). */
static atomic_uint_fast64_t g_collections;

int mantra_pgo_collect_poll(const char *default_path) {
    if (!atomic_exchange(&g_requested, 0))
        return 0;
    const char *tmpl = getenv("MANTRA_PGOCollectPath");
    if (tmpl == NULL || tmpl[0] == '\0')
        tmpl = default_path;
    const char *secs = getenv("MANTRA_PGOCollectSeconds");
    uint32_t seconds = secs != NULL ? (uint32_t)strtoul(secs, NULL, 10) : 0;
    uint64_t n = (uint64_t)atomic_fetch_add(&g_collections, 1) + 1;
    char path[4096];
    int rc = mantra_output_path_expand(tmpl, n, path, sizeof path);
    if (rc >= 0)
        rc = mantra_pgo_collect_ex(path, seconds, 0, NULL);
    return rc < 0 ? rc : 1;
}

static _Atomic int g_watch_stop;

/* Polls, then ends when unwatched: a request made before the unwatch still starts its collection. */
static int watch_job(void *data) {
    (void)mantra_pgo_collect_poll(data);
    if (atomic_load(&g_watch_stop)) {
        free(data);
        return MANTRA_JOB_DONE;
    }
    return MANTRA_JOB_AGAIN;
}

int mantra_pgo_collect_watch(const char *default_path) {
    if (default_path == NULL)
        return MANTRA_EINVAL;
    size_t n = strlen(default_path) + 1;
    char *p = malloc(n);
    if (p == NULL)
        return MANTRA_ENOMEM;
    memcpy(p, default_path, n);
    atomic_store(&g_watch_stop, 0);
    int rc = mantra_queue_job(watch_job, p);
    if (rc != 0)
        free(p);
    return rc;
}

void mantra_pgo_collect_unwatch(void) { atomic_store(&g_watch_stop, 1); }
