/* mantra_web.c - the browser build of mantra (examples/browser, docs/browser.md): a WASI reactor
 * module (no main; the page calls _initialize, then these exports) holding libmantra (threadless),
 * the reference interpreter and the generated .NET runtime providers. The page's JavaScript
 * (web/mantra.js) gives it a WASI shim with an in-memory file system, pumps mantra_web_pump() from
 * a timer and runs interpreted work in slices. Collections are the library's: a session stopped by
 * mantra_session_stop_after (a pump job here), or mantra_pgo_collect_ex for PGO.
 *
 * Strings cross the boundary as NUL-terminated UTF-8 in memory from mantra_web_alloc. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dotnet_pgo.h"
#include "dotnet_registry.h"
#include "mantra/interp.h"
#include "mantra/pump.h"
#include "mantra/session.h"

#define WEB_EXPORT(name) __attribute__((export_name(name)))

static char g_error[512];
static mantra_interp_module *g_module;
static mantra_interp_program *g_program;
static mantra_interp_thread *g_thread;

static void set_error(const char *what, const char *why) {
    snprintf(g_error, sizeof g_error, "%s%s%s", what, why && why[0] ? ": " : "", why ? why : "");
}

WEB_EXPORT("mantra_web_alloc") void *web_alloc(size_t size) { return malloc(size ? size : 1); }
WEB_EXPORT("mantra_web_free") void web_free(void *p) { free(p); }
WEB_EXPORT("mantra_web_last_error") const char *web_last_error(void) { return g_error; }

/* Registers the generated providers, installs the PGO flush (every session that takes
 * JitInstrumentationDataVerbose gets the counters when it stops) and reads the MANTRA_* startup
 * variables. 0 or -1. */
WEB_EXPORT("mantra_web_init") int web_init(void) {
    if (mantra_dotnet_register() != 0)
        return set_error("cannot register the .NET runtime providers", NULL), -1;
    if (mantra_dotnet_pgo_init(0) != 0)
        return set_error("cannot install the PGO flush", NULL), -1;
    if (mantra_init() < 0)
        return set_error("startup tracing", mantra_session_last_error()), -1;
    return 0;
}

/* Assembles and loads a program (pgo_mode 0, 1 or 2: its probes) and makes its thread. 0 or -1. */
WEB_EXPORT("mantra_web_load") int web_load(const char *text, size_t size, const char *file, int pgo_mode) {
    mantra_interp_diag diag;
    if (g_program != NULL)
        return set_error("a program is already loaded", NULL), -1;
    int rc = mantra_interp_assemble(text, size, file, &g_module, &diag);
    if (rc != 0)
        return set_error(rc == MANTRA_EFORMAT ? diag.text : mantra_strerror(rc), NULL), -1;
    mantra_interp_load_options o;
    mantra_interp_load_options_init(&o);
    o.pgo_mode = pgo_mode;
    if ((rc = mantra_interp_load(g_module, &o, &g_program)) != 0 ||
        (rc = mantra_interp_thread_create(g_program, NULL, &g_thread)) != 0)
        return set_error("loading the program", mantra_strerror(rc)), -1;
    return 0;
}

/* Runs method entry with one int64 argument (or none when it takes none); its int64 result in
 * *result. 0 or -1 (the fault in mantra_web_last_error). */
WEB_EXPORT("mantra_web_run") int web_run(const char *entry, int64_t arg, int64_t *result) {
    if (g_thread == NULL)
        return set_error("no program loaded", NULL), -1;
    int64_t m = mantra_interp_module_find(g_module, entry);
    if (m < 0)
        return set_error("no such method", entry), -1;
    mantra_interp_value a = {.i = arg}, r = {.i = 0};
    size_t nargs = mantra_interp_module_arg_count(g_module, (size_t)m) > 0 ? 1u : 0u;
    if (mantra_interp_thread_run(g_thread, entry, &a, nargs, &r) != 0)
        return set_error(mantra_interp_thread_last_error(g_thread), NULL), -1;
    fflush(stdout);
    if (result != NULL)
        *result = r.i;
    return 0;
}

/* Starts a file session (providers in dotnet-trace syntax) writing path, stopped when seconds have
 * passed (mantra_session_stop_after: by id, so a timer of an earlier session never stops a later
 * one). The session id, or 0 with the reason in mantra_web_last_error. */
WEB_EXPORT("mantra_web_trace_start") uint64_t web_trace_start(const char *providers, const char *path,
                                                             uint32_t buffer_mb, uint32_t seconds) {
    mantra_session_config c;
    mantra_session_config_init(&c);
    c.providers = providers;
    c.output = MANTRA_SESSION_OUTPUT_FILE;
    c.path = path;
    if (buffer_mb != 0)
        c.buffer_mb = buffer_mb;
    mantra_session_id id = 0;
    if (mantra_session_start(&id, &c) < 0)
        return set_error("cannot start the session", mantra_session_last_error()), 0u;
    if (mantra_session_stop_after(id, seconds * 1000u) != 0) {
        (void)mantra_session_stop(id);
        return set_error("cannot arm the session's timer", NULL), 0u;
    }
    return id;
}

/* A PGO collection (mantra_pgo_collect_ex: the runtime provider with JitInstrumentationData, Loader
 * and Jit, stopped after seconds; its stop writes the flush). The session id, or 0. */
WEB_EXPORT("mantra_web_pgo_collect") uint64_t web_pgo_collect(const char *path, uint32_t seconds) {
    mantra_session_id id = 0;
    int rc = mantra_pgo_collect_ex(path, seconds, 0, &id);
    if (rc != 0)
        return set_error("cannot start the PGO collection", mantra_session_last_error()), 0u;
    return id;
}

/* 1 while session id runs, 0 once it has stopped. */
WEB_EXPORT("mantra_web_trace_running") int web_trace_running(uint64_t id) { return mantra_session_bit(id) >= 0; }

/* Runs the queued jobs (the drain of every session): call it from the page's event loop. */
WEB_EXPORT("mantra_web_pump") uint32_t web_pump(void) { return (uint32_t)mantra_pump(); }
