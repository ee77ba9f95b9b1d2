/* startup_host - a program that uses startup tracing the way a host would, spawned by
 * test_startup with MANTRA_* variables set per case.
 *
 *   startup_host MODE N [SLEEP_MS]
 *
 * Registers the generated providers, calls mantra_init(), writes N Mantra-Demo Tick events
 * (Thread = 7, Index = 0..N-1) and one each of SampleProfiler ThreadSample, DotNETRuntime
 * MethodLoad_V2 and DotNETRuntime R2RGetEntryPointStart (to see which providers the session has
 * enabled), sleeps SLEEP_MS while pumping the job queue every 10 ms, then ends according to MODE:
 *   return    returns from main; the atexit handler of mantra_init must end the trace
 *   shutdown  calls mantra_shutdown() and leaves with _exit(0) (no atexit handlers run)
 *   threads   like return, but mantra_init is called by 4 threads at once
 *   retry     mantra_init must fail first (the case sets a bad MANTRA_EventPipeCircularMB); the
 *             host prints that error, unsets the variable, and the second call must succeed
 * stdout: "session yes|no\nok N1 dropped N2 disabled N3\n" (counts of the Tick write results).
 * A failing mantra_init prints mantra_session_last_error() and a newline on stderr and exits 2.
 * Other exit codes: 3 bad usage, 4 a check inside the host failed. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dotnet_registry.h"
#include "dotnet_writers.h"
#include "mantra/pump.h"
#include "mantra/session.h"

#define NTHREADS 4

typedef struct init_result {
    int rc;
    mantra_session_id id;
} init_result;

static pthread_barrier_t g_barrier;

static void *init_thread(void *arg) {
    init_result *r = arg;
    pthread_barrier_wait(&g_barrier);
    r->rc = mantra_init();
    r->id = mantra_startup_session();
    if (r->rc != 0)
        fprintf(stderr, "%s\n", mantra_session_last_error());
    return NULL;
}

static int init_failed(void) {
    fprintf(stderr, "%s\n", mantra_session_last_error());
    return 2;
}

int main(int argc, char **argv) {
    if (argc < 3 || argc > 4)
        return 3;
    const char *mode = argv[1];
    unsigned long n = strtoul(argv[2], NULL, 10);
    unsigned long sleep_ms = argc > 3 ? strtoul(argv[3], NULL, 10) : 0;
    if (mantra_dotnet_register() != 0)
        return 4;

    if (strcmp(mode, "threads") == 0) {
        pthread_t th[NTHREADS];
        init_result res[NTHREADS];
        memset(res, 0, sizeof res);
        pthread_barrier_init(&g_barrier, NULL, NTHREADS);
        for (int i = 0; i < NTHREADS; i++)
            if (pthread_create(&th[i], NULL, init_thread, &res[i]) != 0)
                return 4;
        for (int i = 0; i < NTHREADS; i++)
            pthread_join(th[i], NULL);
        pthread_barrier_destroy(&g_barrier);
        for (int i = 0; i < NTHREADS; i++)
            if (res[i].rc != 0)
                return 2;
        for (int i = 1; i < NTHREADS; i++)
            if (res[i].id != res[0].id)
                return 4;
        if (res[0].id != mantra_startup_session())
            return 4;
    } else if (strcmp(mode, "retry") == 0) {
        if (mantra_init() == 0)
            return 4;
        fprintf(stderr, "%s\n", mantra_session_last_error());
        if (mantra_startup_session() != 0)
            return 4;
        unsetenv("MANTRA_EventPipeCircularMB");
        if (mantra_init() != 0)
            return init_failed();
    } else if (strcmp(mode, "return") == 0 || strcmp(mode, "shutdown") == 0) {
        if (mantra_init() != 0)
            return init_failed();
    } else {
        return 3;
    }
    mantra_session_id id = mantra_startup_session();
    /* idempotent: a second call does nothing */
    if (mantra_init() != 0 || mantra_startup_session() != id)
        return 4;
    printf("session %s\n", id ? "yes" : "no");

    unsigned long ok = 0, dropped = 0, disabled = 0;
    for (unsigned long i = 0; i < n; i++) {
        int rc = mantra_Demo_Tick_write(7, i);
        if (rc == MANTRA_WRITE_OK)
            ok++;
        else if (rc == MANTRA_WRITE_DROPPED)
            dropped++;
        else if (rc == MANTRA_WRITE_DISABLED)
            disabled++;
        else
            return 4;
    }
    (void)mantra_SampleProfiler_ThreadSample_write(1);
    (void)mantra_DotNETRuntime_MethodLoad_V2_write(0x1000, 0x2000, 0x7f0000001000u, 0x40, 0x06000001u, 0x8, 1, 0);
    (void)mantra_DotNETRuntime_R2RGetEntryPointStart_write(0x1000, 1);
    printf("ok %lu dropped %lu disabled %lu\n", ok, dropped, disabled);
    fflush(stdout);
    /* an event loop that pumps the job queue (it drains the sessions in the threadless build; the
     * queue is empty in the threaded build) */
    for (unsigned long t = 0; t < sleep_ms; t += 10) {
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
        mantra_pump();
    }
    if (strcmp(mode, "shutdown") == 0) {
        mantra_shutdown();
        if (mantra_startup_session() != 0)
            _exit(4);
        mantra_shutdown(); /* safe twice */
        _exit(0);
    }
    return 0;
}
