/* Startup tracing from the environment (mantra/session.h, "process lifetime and startup
 * tracing"): mantra_init() and mantra_startup_session().
 *
 * The .NET runtime starts a session at startup from DOTNET_EnableEventPipe, DOTNET_EventPipeConfig,
 * DOTNET_EventPipeOutputPath and DOTNET_EventPipeCircularMB (dotnet/runtime,
 * src/native/eventpipe/ep.c, enable_default_session_via_env_variables). mantra reads
 * the same variables with the MANTRA_ prefix:
 *
 *   MANTRA_EnableEventPipe      exactly "1" starts a FILE session; unset, empty, "0" and every
 *                               other value start nothing (see enable_requested()).
 *   MANTRA_EventPipeConfig      provider spec, dotnet-trace syntax; unset or empty: DEFAULT_CONFIG.
 *   MANTRA_EventPipeOutputPath  unset or empty: "trace.nettrace"; every "{pid}" becomes the
 *                               process id.
 *   MANTRA_EventPipeCircularMB  the session cap in MB: decimal, or hexadecimal with 0x; 0 becomes
 *                               1 (as in ep.c); unset or empty: the session default (256).
 *
 * Rundown at stop with MANTRA_DEFAULT_RUNDOWN_KEYWORDS, as the runtime does for this session
 * (dotnet/runtime, src/native/eventpipe/ep.c, ep_default_rundown_keyword).
 *
 * Errors name the variable. MANTRA_EventPipeCircularMB and MANTRA_EventPipeConfig are checked
 * before anything is created: a bad value registers nothing and creates (or truncates) no file. An
 * output that cannot be created fails in mantra_session_start, after the exit handler was
 * registered (harmless: mantra_shutdown with no session stops nothing).
 *
 * atexit: mantra_shutdown is registered once, by the first mantra_init that is about to start a
 * session (registered before the session starts, so that a failing atexit() leaves nothing
 * running). A process whose environment asks for nothing gets no exit handler from here.
 *
 * Concurrency: g_state is 0 (not done), 1 (a thread is inside mantra_init) or 2 (done). Callers
 * that find 1 spin until the first finishes. A successful call moves to 2 and every later call
 * returns 0 without reading the environment again. A failed call moves back to 0 so that a later
 * call reads the environment again and reports the error on its own thread (the error text is
 * per thread). */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mantra/session.h"
#include "platform/platform-internal.h"
#include "session-internal.h"
#include "startup-internal.h"

/* The providers the .NET runtime enables when DOTNET_EventPipeConfig is empty (dotnet/runtime,
 * src/native/eventpipe/ep.c, enable_default_session_via_env_variables: DotNETRuntime 0x4c14fccbd at level 5,
 * DotNETRuntimePrivate 0x4002000b at level 5, SampleProfiler; spelled out as the .NET EventPipe
 * documentation lists them, "Microsoft-DotNETCore-SampleProfiler:0:5"). */
#define DEFAULT_CONFIG                                                                                            \
    "Microsoft-Windows-DotNETRuntime:0x4c14fccbd:5,Microsoft-Windows-DotNETRuntimePrivate:0x4002000b:5,"          \
    "Microsoft-DotNETCore-SampleProfiler:0:5"
#define DEFAULT_OUTPUT_PATH "trace.nettrace"

static atomic_int g_state;
static _Atomic mantra_session_id g_startup_id;
static int g_atexit_registered; /* only touched while g_state == 1 */
/* The session may keep the configuration's strings (rotation needs the path later), so they live
 * as long as the process. Replaced only when a later mantra_init starts again (never, once one
 * succeeded); reachable from here, so not reported as leaks. */
static char *g_path;
static char *g_providers;

static int fail(int rc, const char *msg) {
    ss_set_error(msg);
    return rc;
}

/* The .NET runtimes disagree: CoreCLR enables for any non-zero value
 * (CLRConfig::GetConfigValue(INTERNAL_EnableEventPipe) != 0), Mono for atoi(value) == 1. mantra
 * takes the documented spelling only: exactly "1". Anything else ("0", "2", "true", " 1")
 * starts nothing and is not an error. */
static int enable_requested(void) {
    const char *v = mantra_pal_getenv_set("MANTRA_EnableEventPipe");
    return v && strcmp(v, "1") == 0;
}

/* MANTRA_EventPipeCircularMB: digits (decimal) or 0x + hex digits, at most UINT32_MAX. No sign,
 * no blanks. 0 becomes 1 as in ep.c. */
static int parse_circular_mb(const char *v, uint32_t *out) {
    char msg[160];
    int hex = v[0] == '0' && (v[1] == 'x' || v[1] == 'X');
    uint64_t n;
    int rc = mantra_pal_parse_uint(hex ? v + 2 : v, hex ? 16u : 10u, UINT32_MAX, &n);
    if (rc == MANTRA_EINVAL) {
        snprintf(msg, sizeof msg, "MANTRA_EventPipeCircularMB: \"%.64s\" is not a number", v);
        return fail(MANTRA_EINVAL, msg);
    }
    if (rc == MANTRA_ERANGE) {
        snprintf(msg, sizeof msg, "MANTRA_EventPipeCircularMB: \"%.64s\" is out of range (at most %lu)", v,
                 (unsigned long)UINT32_MAX);
        return fail(MANTRA_ERANGE, msg);
    }
    *out = n ? (uint32_t)n : 1u;
    return MANTRA_OK;
}

static char *dup_string(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

/* The provider spec alone, before anything is opened: a bad spec creates no file whatever order
 * mantra_session_start checks things in. The entry count is at most commas + 1. */
static int check_providers(const char *spec) {
    size_t cap = 1;
    for (const char *p = spec; *p; p++)
        if (*p == ',')
            cap++;
    mantra_provider_spec *specs = malloc(cap * sizeof *specs);
    if (!specs)
        return fail(MANTRA_ENOMEM, "MANTRA_EventPipeConfig: out of memory");
    size_t n = 0, col = 0;
    int rc = mantra_provider_spec_parse(spec, specs, cap, &n, &col);
    free(specs);
    if (rc != 0) {
        char msg[320];
        snprintf(msg, sizeof msg, "MANTRA_EventPipeConfig: %s", mantra_session_last_error());
        return fail(rc, msg);
    }
    return MANTRA_OK;
}

static int init_once(void) {
    if (!enable_requested())
        return MANTRA_OK;
    const char *providers = mantra_pal_getenv_set("MANTRA_EventPipeConfig");
    if (!providers)
        providers = DEFAULT_CONFIG;
    const char *path = mantra_pal_getenv_set("MANTRA_EventPipeOutputPath");
    if (!path)
        path = DEFAULT_OUTPUT_PATH;
    const char *circular = mantra_pal_getenv_set("MANTRA_EventPipeCircularMB");

    mantra_session_config cfg;
    mantra_session_config_init(&cfg);
    int rc;
    if (circular && (rc = parse_circular_mb(circular, &cfg.buffer_mb)) != 0)
        return rc;
    if ((rc = check_providers(providers)) != 0)
        return rc;

    char *own_path = ss_path_expand(path, mantra_pal_pid(), 0);
    char *own_providers = dup_string(providers);
    if (!own_path || !own_providers) {
        free(own_path);
        free(own_providers);
        return fail(MANTRA_ENOMEM, "MANTRA_EnableEventPipe: out of memory");
    }
    if (!g_atexit_registered) {
        if (atexit(mantra_shutdown) != 0) {
            free(own_path);
            free(own_providers);
            return fail(MANTRA_ENOMEM, "MANTRA_EnableEventPipe: atexit() cannot register mantra_shutdown");
        }
        g_atexit_registered = 1;
    }
    cfg.providers = own_providers;
    cfg.output = MANTRA_SESSION_OUTPUT_FILE;
    cfg.path = own_path;
    cfg.rundown_keywords = MANTRA_DEFAULT_RUNDOWN_KEYWORDS;

    mantra_session_id id = 0;
    rc = mantra_session_start(&id, &cfg);
    if (rc != 0) {
        /* Name the variable the failure comes from: the providers (the session may check more
         * than the syntax, e.g. the entry count), the output file, or the session itself. */
        const char *why = mantra_session_last_error();
        const char *var = strncmp(why, "providers:", 10) == 0 ? "MANTRA_EventPipeConfig"
                          : rc == MANTRA_EIO                  ? "MANTRA_EventPipeOutputPath"
                                                              : "MANTRA_EnableEventPipe";
        char msg[320];
        snprintf(msg, sizeof msg, "%s: %s", var, why[0] ? why : "cannot start the session");
        free(own_path);
        free(own_providers);
        return fail(rc, msg);
    }
    free(g_path);
    free(g_providers);
    g_path = own_path;
    g_providers = own_providers;
    atomic_store_explicit(&g_startup_id, id, memory_order_release);
    return MANTRA_OK;
}

/* The startup session of mantra_init(), which lives in the top layer (src/diag/process.c) so that
 * it can also start the diagnostics server without this layer calling upward. */
int ss_startup_init(void) {
    for (;;) {
        int expected = 0;
        if (atomic_compare_exchange_weak_explicit(&g_state, &expected, 1, memory_order_acquire,
                                                  memory_order_acquire))
            break;
        if (expected == 2)
            return MANTRA_OK;
        if (expected == 1)
            mantra_pal_yield();
    }
    int rc = init_once();
    atomic_store_explicit(&g_state, rc == 0 ? 2 : 0, memory_order_release);
    return rc;
}

mantra_session_id mantra_startup_session(void) {
    mantra_session_id id = atomic_load_explicit(&g_startup_id, memory_order_acquire);
    /* 0 once that session has stopped (mantra_shutdown, mantra_session_stop_all, or by id). */
    return id && mantra_session_bit(id) >= 0 ? id : 0;
}
