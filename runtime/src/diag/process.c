/* Process start-up of the top layer: mantra_init() (mantra/session.h) starts the Mantra.Runtime
 * counters (mantra/counters.h; first, so that the startup sessions see them too, and so that any
 * host that calls mantra_init answers `dotnet-counters` without more code), runs the startup tracing
 * of the session layer, then starts the diagnostics server (mantra/diag.h) from the environment:
 *
 *   MANTRA_EnableDiagnostics            "0": no server at all (as DOTNET_EnableDiagnostics=0);
 *   MANTRA_DiagnosticPorts              more ports (ports.c);
 *   MANTRA_DefaultDiagnosticPortSuspend "1": the default port suspends start-up too;
 *   MANTRA_DiagnosticsTimeoutMs         how long a command may take to arrive, and a send may
 *                                       stall, in ms (default 5000; mantra's own).
 *
 * The default port is $TMPDIR/dotnet-diagnostic-<pid>-<key>-socket, the key the process start time
 * (dotnet/diagnostics ipc-protocol.md "Naming and Location Conventions"; dotnet/runtime,
 * src/native/eventpipe/ds-ipc-pal-socket.c, ipc_transport_get_default_name). Tools find it by pid
 * with the pattern dotnet-diagnostic-{pid}-*-socket (Microsoft.Diagnostics.NETCore.Client,
 * IpcTransport.cs).
 *
 * Suspend (dotnet/runtime, ds-server.c, ds_server_pause_for_diagnostics_monitor): mantra_init waits
 * until every suspending port got a ResumeRuntime, and says so on stderr after 5 s. The threadless
 * build cannot wait (nothing else would run the server), so there it does not suspend, as the
 * runtime's single-threaded build does not.
 *
 * Threads: the server runs on its own thread, one round every 100 ms at most (poll), which the
 * stop wakes at once through a pipe, or as a job of mantra_pump() in the threadless build, one
 * round without waiting per pump. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag/server-internal.h"
#include "mantra/counters.h"
#include "mantra/diag.h"
#include "mantra/pump.h"
#include "platform/platform-internal.h"
#include "session/startup-internal.h"

static dg_server g_srv;
/* 0 stopped, 1 starting or stopping, 2 running */
static atomic_int g_state;
/* The process that started the server: a forked child inherits g_state but neither the thread nor
 * the right to remove the socket file (its atexit must leave the parent's server alone). */
static uint32_t g_owner;
static int g_atexit;
static char g_error[320];
#ifndef MANTRA_THREADLESS
static mantra_pal_thread g_thread;
#else
static atomic_int g_job_queued;
#endif

static int fail(int rc, const char *msg) {
    snprintf(g_error, sizeof g_error, "%s", msg);
    return rc;
}

const char *mantra_diag_last_error(void) { return g_error; }
int mantra_diag_running(void) { return atomic_load(&g_state) == 2 && g_owner == mantra_pal_pid(); }
const char *mantra_diag_socket_path(void) { return mantra_diag_running() ? g_srv.default_path : ""; }

uint32_t dg_server_wait_ms = 100;

#ifndef MANTRA_THREADLESS
static void server_main(void *arg) {
    dg_server *s = arg;
    while (!atomic_load(&s->stop))
        dg_server_tick(s, dg_server_wait_ms);
}
#else
static int server_job(void *arg) {
    dg_server *s = arg;
    if (atomic_load(&s->stop)) {
        atomic_store(&g_job_queued, 0);
        return MANTRA_JOB_DONE;
    }
    dg_server_tick(s, 0);
    return MANTRA_JOB_AGAIN;
}
#endif

/* Reads the environment into g_srv's ports. */
static int configure(dg_server *s) {
    memset(s->ports, 0, sizeof s->ports);
    s->nports = 0;
    s->timeout_ms = 5000;
    const char *t = mantra_pal_getenv_set("MANTRA_DiagnosticsTimeoutMs");
    if (t) {
        /* strtoul's spelling, kept: leading blanks and a '+' are taken (mantra_pal_parse_uint would
         * refuse them) */
        char *end;
        unsigned long v = strtoul(t, &end, 10);
        if (*end || v == 0 || v > 600000)
            return fail(MANTRA_EINVAL, "MANTRA_DiagnosticsTimeoutMs: expected milliseconds, 1..600000");
        s->timeout_ms = (uint32_t)v;
    }
    const char *ports = mantra_pal_getenv_set("MANTRA_DiagnosticPorts");
    dg_port_spec specs[DG_MAX_PORTS - 1];
    size_t n = 0;
    if (ports) {
        int rc = dg_parse_ports(ports, specs, DG_MAX_PORTS - 1, &n, g_error, sizeof g_error);
        if (rc)
            return rc;
    }
    if (!mantra_pal_sockets_available())
        return ports ? fail(MANTRA_EUNSUPPORTED, "MANTRA_DiagnosticPorts: this host has no sockets") : 1;
    dg_port *d = &s->ports[s->nports++];
    d->is_default = 1;
    d->spec.connect = 0;
    const char *susp = mantra_pal_getenv_set("MANTRA_DefaultDiagnosticPortSuspend");
    d->spec.suspend = susp && strcmp(susp, "1") == 0;
    int k = snprintf(d->spec.address, sizeof d->spec.address, "%s/dotnet-diagnostic-%lu-%llu-socket",
                     mantra_pal_tmpdir(), (unsigned long)mantra_pal_pid(),
                     (unsigned long long)mantra_pal_start_key());
    if (k < 0 || (size_t)k >= 108) /* sun_path */
        return fail(MANTRA_ERANGE, "TMPDIR is too long for the diagnostics socket path (108 bytes)");
    for (size_t i = 0; i < n; i++)
        s->ports[s->nports++].spec = specs[i];
    return 0;
}

static void close_all(void) {
    dg_server_close(&g_srv);
    for (int i = 0; i < 2; i++) {
        if (g_srv.wake[i] >= 0)
            (void)mantra_pal_close(g_srv.wake[i], NULL, 0);
        g_srv.wake[i] = -1;
    }
    mantra_pal_cond_destroy(&g_srv.resume_cond);
    mantra_pal_mutex_destroy(&g_srv.resume_lock);
}

static int start_locked(void) {
    dg_server *s = &g_srv;
    s->wake[0] = s->wake[1] = -1;
    int rc = configure(s);
    if (rc)
        return rc > 0 ? 0 : rc;
    if (mantra_pal_mutex_init(&s->resume_lock) != 0)
        return fail(MANTRA_ENOMEM, "diagnostics server: out of memory");
    if (mantra_pal_cond_init(&s->resume_cond) != 0) {
        mantra_pal_mutex_destroy(&s->resume_lock);
        return fail(MANTRA_ENOMEM, "diagnostics server: out of memory");
    }
    mantra_pal_random(s->cookie, sizeof s->cookie);
    atomic_store(&s->stop, 0);
    size_t opened = 0;
    for (size_t i = 0; i < s->nports; i++) {
        char err[256];
        if (dg_port_open(&s->ports[i], err, sizeof err) == 0) {
            opened++;
            continue;
        }
        snprintf(g_error, sizeof g_error, "diagnostics port %.100s: %.200s", s->ports[i].spec.address, err);
        s->ports[i].spec.suspend = 0; /* a port that cannot open cannot resume either */
    }
    _Static_assert(sizeof s->default_path == sizeof s->ports[0].spec.address, "path sizes");
    if (s->ports[0].fd >= 0)
        memcpy(s->default_path, s->ports[0].spec.address, sizeof s->default_path);
    else
        s->default_path[0] = 0;
    if (opened == 0) {
        rc = MANTRA_EIO;
        close_all();
        return rc;
    }
#ifndef MANTRA_THREADLESS
    /* without it the stop waits for the thread's poll to time out: up to 100 ms at every exit of a
     * program that called mantra_init (`mantra emit` under strace -f: 73 ms after its output) */
    if (mantra_pal_wake_open(s->wake) != 0)
        s->wake[0] = s->wake[1] = -1;
    if (mantra_pal_thread_start(&g_thread, server_main, s) != 0) {
        close_all();
        return fail(MANTRA_ENOMEM, "diagnostics server: cannot start its thread");
    }
#else
    if (!atomic_load(&g_job_queued)) {
        if (mantra_queue_job(server_job, s) != 0) {
            close_all();
            return fail(MANTRA_ENOMEM, "diagnostics server: cannot queue its job");
        }
        atomic_store(&g_job_queued, 1);
    }
#endif
    if (!g_atexit && atexit(mantra_diag_stop) == 0)
        g_atexit = 1;
    return 0;
}

int mantra_diag_start(void) {
    if (atomic_load(&g_state) == 2 && g_owner != mantra_pal_pid())
        return MANTRA_OK; /* a forked child of a process with a server: none of its own */
    int expected = 0;
    if (!atomic_compare_exchange_strong(&g_state, &expected, 1))
        return MANTRA_OK; /* running, or another thread starts or stops it */
    int rc = start_locked();
    g_owner = mantra_pal_pid();
    atomic_store(&g_state, rc == 0 && g_srv.nports ? 2 : 0);
    return rc;
}

void mantra_diag_stop(void) {
    if (g_owner != mantra_pal_pid())
        return; /* a forked child: the server is the parent's */
    int expected = 2;
    if (!atomic_compare_exchange_strong(&g_state, &expected, 1))
        return;
    atomic_store(&g_srv.stop, 1);
    if (g_srv.wake[1] >= 0)
        mantra_pal_wake(g_srv.wake[1]);
    mantra_pal_mutex_lock(&g_srv.resume_lock); /* a suspended mantra_init gives up waiting */
    mantra_pal_cond_broadcast(&g_srv.resume_cond);
    mantra_pal_mutex_unlock(&g_srv.resume_lock);
#ifndef MANTRA_THREADLESS
    mantra_pal_thread_join(&g_thread);
#endif
    close_all();
    atomic_store(&g_state, 0);
}

/* Holds the calling thread while a suspending port waits for ResumeRuntime. */
static void wait_for_resume(void) {
#ifndef MANTRA_THREADLESS
    dg_server *s = &g_srv;
    uint64_t start = mantra_pal_now_ns();
    int told = 0;
    mantra_pal_mutex_lock(&s->resume_lock);
    while (dg_server_suspended(s) && !atomic_load(&s->stop)) {
        if (!told && mantra_pal_now_ns() - start > UINT64_C(5000000000)) {
            fprintf(stderr, "mantra: start-up is paused until a diagnostics tool sends ResumeRuntime "
                            "(MANTRA_DiagnosticPorts / MANTRA_DefaultDiagnosticPortSuspend)\n");
            told = 1;
        }
        mantra_pal_cond_timedwait(&s->resume_cond, &s->resume_lock, 500);
    }
    mantra_pal_mutex_unlock(&s->resume_lock);
#endif
}

int mantra_init(void) {
    /* Before this starts any thread, and only while the process has one: registering for
     * membarrier(2) is free then, and waits for an RCU grace period once it has more (12-22 ms on
     * this guest, which the first session start paid otherwise: `mantra emit` under strace -T); a
     * host that already has threads pays it at its first session start, if it starts one. */
    if (mantra_pal_single_threaded())
        ss_init_writers_fence();
    int rc = mantra_counters_init();
    if (rc != 0) {
        ss_set_error(mantra_counters_last_error());
        return rc;
    }
    rc = ss_startup_init();
    if (rc != 0)
        return rc;
    const char *enabled = mantra_pal_getenv_set("MANTRA_EnableDiagnostics");
    if (enabled && strcmp(enabled, "0") == 0)
        return MANTRA_OK;
    int was_running = mantra_diag_running();
    rc = mantra_diag_start();
    if (rc == MANTRA_EINVAL || rc == MANTRA_EUNSUPPORTED || rc == MANTRA_ERANGE) {
        ss_set_error(g_error); /* mantra_init reports through mantra_session_last_error() */
        return rc;
    }
    /* a port that cannot open (MANTRA_EIO) does not stop the program, as in the .NET runtime */
    if (!was_running && mantra_diag_running())
        wait_for_resume();
    return MANTRA_OK;
}
